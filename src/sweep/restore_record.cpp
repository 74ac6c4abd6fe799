#include "sweep/restore_record.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "util/output_file.hpp"
#include "util/small_file.hpp"

namespace gpuscope::sweep {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

}  // namespace

fs::path restore_record_path(const fs::path& output) {
  return fs::path(output.string() + ".restore.json");
}

std::string restore_record_json(const RestoreRecord& r) {
  json gpus = json::array();
  for (const auto& g : r.gpus) {
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"power_limit_mw", g.power_limit_mw},
                    {"clocks_locked", g.clocks_locked}});
  }
  json j = {{"gpuscope_restore_record", r.version},
            {"created_unix_ns", r.created_unix_ns},
            {"pid", r.pid},
            {"host", r.host},
            {"output", r.output},
            {"simulate", r.simulate},
            {"nvml_library", r.nvml_library},
            {"gpus", gpus}};
  return json_text(j, 2) + "\n";
}

RestoreRecord parse_restore_record(const std::string& text, const std::string& source) {
  try {
    const json j = json::parse(text);
    RestoreRecord r;
    r.version = j.at("gpuscope_restore_record").get<int>();
    if (r.version != 1) {
      throw Error(fmt::format("{} is a restore record of version {}", source, r.version), {},
                  "use the gpuscope that wrote it");
    }
    r.created_unix_ns = j.value("created_unix_ns", std::int64_t{0});
    r.pid = j.value("pid", 0);
    r.host = j.value("host", "");
    r.output = j.value("output", "");
    r.simulate = j.value("simulate", "");
    r.nvml_library = j.value("nvml_library", "");
    for (const auto& g : j.at("gpus")) {
      RestoreEntry e;
      e.index = g.at("index").get<unsigned>();
      e.uuid = g.value("uuid", "");
      e.power_limit_mw = g.at("power_limit_mw").get<unsigned>();
      e.clocks_locked = g.value("clocks_locked", false);
      r.gpus.push_back(e);
    }
    return r;
  } catch (const json::exception& e) {
    throw Error(fmt::format("{} is not a gpuscope restore record", source), e.what(),
                "restore the limits by hand (nvidia-smi -pl) and delete the file");
  }
}

void write_restore_record(const fs::path& path, const RestoreRecord& record) {
  // Atomic and durable (util::AtomicFile syncs the file and then its folder): the record must be
  // on disk, under its name, before the first limit changes.
  if (auto error = util::write_file_atomically(path, restore_record_json(record))) {
    throw Error(fmt::format("cannot write the restore record {}", path.string()), error.message(),
                "nothing was changed; check the folder of -o");
  }
}

std::optional<RestoreRecord> read_restore_record(const fs::path& path) {
  // A record of 64 GPUs is a few KiB; a device or FIFO put in its place must not hang --restore.
  constexpr std::size_t kMaxRecordBytes = std::size_t{1} << 20U;
  const auto text = util::read_small_file(path, kMaxRecordBytes);
  if (!text && text.error().error == ENOENT) return std::nullopt;
  if (!text) {
    throw Error(fmt::format("cannot read the restore record {}", path.string()),
                text.error().reason);
  }
  return parse_restore_record(*text, path.string());
}

}  // namespace gpuscope::sweep
