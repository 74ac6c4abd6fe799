#include "ingest/tools/gssr_profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.hpp"
#include "util/json_depth.hpp"
#include "util/small_file.hpp"

namespace gpuscope::ingest::gssr {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t kMaxFileBytes = std::size_t{256} << 20;  // 256 MiB: weeks of samples
// gssr's files nest four levels ({"data": {"0": {"sm_active": [...]}}}); past this is not gssr.
constexpr std::size_t kMaxJsonDepth = 8;
constexpr int kMaxFolderDepth = 3;  // profile_out_JobID_<job>/<step folder>/<file>
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool is_process_file(const fs::path& path) {
  const std::string name = path.filename().string();
  return path.extension() == ".json" && name.find("_proc_") != std::string::npos;
}

// What a walk of a profile folder found: process files, other files, and the folders it could
// not read (with the reason), which leave the profile incomplete.
struct FolderWalk {
  std::vector<fs::path> files, foreign;
  std::vector<std::pair<fs::path, std::string>> unreadable;
};

void collect_files(const fs::path& dir, int depth, FolderWalk& walk) {
  std::error_code error;
  fs::directory_iterator it(dir, error);
  for (; !error && it != fs::directory_iterator(); it.increment(error)) {
    const fs::directory_entry& entry = *it;
    std::error_code kind_error;
    if (entry.is_directory(kind_error)) {
      if (depth < kMaxFolderDepth) collect_files(entry.path(), depth + 1, walk);
    } else if (is_process_file(entry.path())) {
      walk.files.push_back(entry.path());
    } else {
      walk.foreign.push_back(entry.path());
    }
  }
  if (error) walk.unreadable.emplace_back(dir, error.message());
}

// Python's json.dump writes NaN, Infinity and -Infinity as bare words; they become null here.
// Strings are skipped, so a label holding "NaN" stays as it is.
std::string without_python_words(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    std::string_view rest(text.data() + i, text.size() - i);
    for (std::string_view word : {"-Infinity", "Infinity", "NaN"}) {
      if (rest.starts_with(word)) {
        out += "null";
        i += word.size() - 1;
        goto next;
      }
    }
    out += c;
  next:;
  }
  return out;
}

[[noreturn]] void bad(const std::string& name, const std::string& what) {
  throw Error(fmt::format("{} is not a gssr process file as gssr writes it", name), what,
              "give the profile folder gssr wrote (profile_out_JobID_<job>) or its exported "
              "SQLite; docs/gssr.md");
}

const json& require(const json& object, const char* key, const std::string& name) {
  const auto it = object.find(key);
  if (it == object.end()) bad(name, fmt::format("its metadata has no \"{}\"", key));
  return *it;
}

std::string text_of(const json& value, const char* key, const std::string& name) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
  bad(name,
      fmt::format("metadata \"{}\" is {}, not a string or an integer", key, value.type_name()));
}

double number_of(const json& value, const char* key, const std::string& name) {
  if (!value.is_number()) {
    bad(name, fmt::format("metadata \"{}\" is {}, not a number", key, value.type_name()));
  }
  return value.get<double>();
}

}  // namespace

bool is_profile_input(const fs::path& path) {
  std::error_code error;
  if (fs::is_regular_file(path, error)) return is_process_file(path);
  if (!fs::is_directory(path, error)) return false;
  FolderWalk walk;
  collect_files(path, 1, walk);
  return !walk.files.empty();
}

Process parse_process(const std::string& text, const std::string& name,
                      std::vector<std::string>& notes) {
  if (const auto deep = util::nesting_past(text, kMaxJsonDepth)) {
    bad(name, fmt::format("its JSON nests deeper than gssr's does (past {} levels at byte {})",
                          kMaxJsonDepth, *deep));
  }
  json doc;
  try {
    doc = json::parse(without_python_words(text));
  } catch (const json::parse_error& e) {
    bad(name, fmt::format("it is not complete JSON ({}); a gssr run that was killed while "
                          "writing leaves such a file: remove it, or profile again",
                          e.what()));
  } catch (const json::exception& e) {
    // A number past what a double holds (1e400): JSON, but not a value gssr writes.
    bad(name, fmt::format("it holds a value gpuscope cannot read ({})", e.what()));
  }
  if (!doc.is_object()) bad(name, "its top level is not an object");
  const auto metadata = doc.find("metadata");
  const auto data = doc.find("data");
  if (metadata == doc.end() || !metadata->is_object()) bad(name, "it has no \"metadata\" object");
  if (data == doc.end() || !data->is_object()) bad(name, "it has no \"data\" object");
  const json& m = *metadata;
  Process p;
  p.source = name;
  p.job_id = text_of(require(m, "job_id", name), "job_id", name);
  p.step_id = text_of(require(m, "step_id", name), "step_id", name);
  p.label = m.contains("label") && m["label"].is_string() ? m["label"].get<std::string>() : "";
  p.hostname = text_of(require(m, "hostname", name), "hostname", name);
  const json& proc = require(m, "proc_id", name);
  if (!proc.is_number_integer()) bad(name, "metadata \"proc_id\" is not an integer");
  p.proc_id = proc.get<std::int64_t>();
  p.cmd = m.contains("cmd") && m["cmd"].is_string() ? m["cmd"].get<std::string>() : "";
  p.start_time_s = number_of(require(m, "start_time", name), "start_time", name);
  if (m.contains("end_time") && m["end_time"].is_number()) {
    p.end_time_s = m["end_time"].get<double>();
  }
  p.sampling_ms = number_of(require(m, "sampling_time", name), "sampling_time", name);
  if (!(p.sampling_ms > 0) || p.sampling_ms > 3.6e6) {
    bad(name, fmt::format("metadata \"sampling_time\" is {} ms; gssr samples every few hundred "
                          "ms",
                          p.sampling_ms));
  }
  if (!std::isfinite(p.start_time_s) || p.start_time_s < 0 || p.start_time_s > 4.1e9) {
    bad(name, "metadata \"start_time\" is not a time (Unix seconds)");
  }
  std::set<std::string> unknown;
  for (const auto& [gpu_id, metrics] : data->items()) {
    if (!metrics.is_object()) {
      bad(name, fmt::format("data of GPU \"{}\" is not an object of metric series", gpu_id));
    }
    GpuSeries gpu;
    gpu.gpu_id = gpu_id;
    std::optional<std::size_t> length;
    for (const auto& [metric, series] : metrics.items()) {
      const auto index = metric_index(metric);
      if (!index) {
        unknown.insert(metric);
        continue;
      }
      if (!series.is_array()) {
        bad(name, fmt::format("\"{}\" of GPU {} is not a list of values", metric, gpu_id));
      }
      if (length && *length != series.size()) {
        bad(name, fmt::format("the series of GPU {} have different lengths ({} has {} values, "
                              "others {})",
                              gpu_id, metric, series.size(), *length));
      }
      length = series.size();
      std::vector<double>& values = gpu.values[*index];
      values.reserve(series.size());
      for (const json& v : series) {
        if (v.is_number()) {
          values.push_back(v.get<double>());
        } else if (v.is_null()) {
          values.push_back(kNaN);
        } else {
          bad(name, fmt::format("\"{}\" of GPU {} holds {}, not a number", metric, gpu_id,
                                v.type_name()));
        }
      }
    }
    p.gpus.push_back(std::move(gpu));
  }
  if (p.gpus.empty()) bad(name, "its \"data\" holds no GPU");
  if (!unknown.empty()) {
    notes.push_back(fmt::format("{}: metrics gssr does not write, left out: {}", name,
                                fmt::join(unknown, ", ")));
  }
  return p;
}

ProfileRead read_profile(const fs::path& path) {
  FolderWalk walk;
  std::error_code error;
  if (fs::is_directory(path, error)) {
    collect_files(path, 1, walk);
  } else {
    walk.files.push_back(path);
  }
  if (!walk.unreadable.empty()) {
    const auto& [folder, why] = walk.unreadable.front();
    throw Error(fmt::format("cannot read the folder {}", folder.string()),
                walk.unreadable.size() == 1
                    ? why
                    : fmt::format("{}; and {} more folder{}", why, walk.unreadable.size() - 1,
                                  walk.unreadable.size() == 2 ? "" : "s"),
                "its processes would be missing from the analysis: make it readable, or name "
                "the process files or step folders to read");
  }
  std::vector<fs::path>& files = walk.files;
  const std::vector<fs::path>& foreign = walk.foreign;
  if (files.empty()) {
    throw Error::usage(fmt::format("{} holds no gssr process files (*_proc_*.json)", path.string()),
                       {}, "point at the folder gssr profile wrote (profile_out_JobID_<job>)");
  }
  std::sort(files.begin(), files.end());
  ProfileRead read;
  for (const auto& file : files) {
    const auto text = util::read_small_file(file.string(), kMaxFileBytes);
    if (!text) {
      throw Error(fmt::format("cannot read {}", file.string()), text.error().reason,
                  "check the file");
    }
    read.processes.push_back(parse_process(*text, file.string(), read.notes));
  }
  if (!foreign.empty()) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < std::min<std::size_t>(foreign.size(), 5); ++i) {
      names.push_back(foreign[i].filename().string());
    }
    read.notes.push_back(fmt::format("{}: {} file{} that {} not gssr process files left out ({}{})",
                                     path.string(), foreign.size(), foreign.size() == 1 ? "" : "s",
                                     foreign.size() == 1 ? "is" : "are", fmt::join(names, ", "),
                                     foreign.size() > 5 ? ", ..." : ""));
  }
  return read;
}

}  // namespace gpuscope::ingest::gssr
