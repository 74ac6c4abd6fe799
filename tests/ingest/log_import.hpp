// Imports logs through ingest::import_inputs into a temporary run database and reads the result
// back through store::RunReader, for the tests of the log formats.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "ingest/import.hpp"
#include "store/run_reader.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::ingest::test {

namespace fs = std::filesystem;

inline const fs::path kLogs = fs::path(GPUSCOPE_TEST_FIXTURE_DIR) / "logs";
inline const fs::path kH200 = fs::path(GPUSCOPE_TEST_FIXTURE_DIR) / "h200-580";
inline constexpr std::int64_t kSecond = 1'000'000'000;

struct Imported {
  std::vector<std::string> notes;
  std::vector<store::StoredRun> runs;
  std::map<unsigned, DeviceDescription> devices;       // of the first run
  std::map<unsigned, std::vector<SampleRow>> samples;  // by GPU, in time order
  std::map<unsigned, std::vector<HealthRow>> health;   // of the first run, by GPU, in time order
  std::vector<Event> events;                           // of the first run, in time order

  // Whether a note holds every one of `words`.
  bool note_has(std::initializer_list<std::string_view> words) const {
    return std::any_of(notes.begin(), notes.end(), [&](const std::string& note) {
      return std::all_of(words.begin(), words.end(),
                         [&](std::string_view w) { return note.find(w) != std::string::npos; });
    });
  }
  bool problem_has(std::string_view words) const {
    for (const auto& run : runs) {
      for (const auto& p : run.end.problems) {
        if (p.find(words) != std::string::npos) return true;
      }
    }
    return false;
  }
  const SampleRow& at(unsigned gpu, std::size_t k) const { return samples.at(gpu).at(k); }
  std::size_t count(unsigned gpu) const {
    return samples.count(gpu) == 0 ? 0 : samples.at(gpu).size();
  }
  // GPU `gpu`'s health rows (none: empty).
  const std::vector<HealthRow>& health_of(unsigned gpu) const {
    static const std::vector<HealthRow> kNone;
    return health.count(gpu) == 0 ? kNone : health.at(gpu);
  }
  // The events of `kind`, in time order.
  std::vector<Event> events_of(EventKind kind) const {
    std::vector<Event> out;
    for (const auto& e : events) {
      if (e.kind == kind) out.push_back(e);
    }
    return out;
  }
};

inline Imported import_logs(const std::vector<fs::path>& inputs, const ReadOptions& options = {}) {
  gpuscope::testing::TempDir tmp;
  const fs::path out = fs::path(tmp.path()) / "out.db";
  Imported result;
  result.notes = import_inputs(inputs, out, false, options).notes;
  const auto reader = store::RunReader::open(out);
  result.runs = reader.runs();
  if (!result.runs.empty()) {
    const std::int64_t run_id = result.runs.front().run_id;
    for (auto& d : reader.devices(run_id)) result.devices[d.index] = d;
    for (auto& h : reader.health_samples(run_id)) result.health[h.device_index].push_back(h);
    auto events = reader.events({run_id, std::nullopt});
    store::RunEvent e;
    while (events.next(e)) result.events.push_back(e.event);
  }
  reader.for_each_sample(
      {}, [&](const store::RunSample& s) { result.samples[s.row.device_index].push_back(s.row); });
  return result;
}

// The message of the Error importing `inputs` throws ("" when it does not).
inline std::string import_error(const std::vector<fs::path>& inputs,
                                const ReadOptions& options = {}, int* exit_code = nullptr) {
  gpuscope::testing::TempDir tmp;
  try {
    import_inputs(inputs, fs::path(tmp.path()) / "out.db", false, options);
  } catch (const Error& e) {
    if (exit_code != nullptr) *exit_code = e.exit_code();
    return e.what();
  }
  return {};
}

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline fs::path write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// `text` with every "\n" as "\r\n".
inline std::string crlf(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

inline void set_modified(const fs::path& path, std::int64_t unix_s) {
  const auto sys = std::chrono::system_clock::time_point(std::chrono::seconds(unix_s));
  fs::last_write_time(path, std::chrono::file_clock::from_sys(sys));
}

inline std::optional<double> value(const SampleRow& row, Metric m) {
  return row.get(m);
}

}  // namespace gpuscope::ingest::test
