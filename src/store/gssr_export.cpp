#include "store/gssr_export.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sqlite3.h>

#include <cmath>
#include <ctime>
#include <iomanip>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"

namespace gpuscope::store {
namespace {

namespace fs = std::filesystem;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t kMaxSamples = 100'000'000;  // per GPU: far past any gssr run

[[noreturn]] void bad(const fs::path& path, const std::string& what) {
  throw Error(fmt::format("{} is not a gssr export gpuscope can read", path.string()), what,
              "give the file gssr analyze --export wrote, or the profile folder itself "
              "(docs/gssr.md)");
}

std::set<std::string> columns_of(Database& db, const std::string& table) {
  std::set<std::string> names;
  Statement info = db.prepare(fmt::format("PRAGMA main.table_info(\"{}\")", table));
  while (info.step()) names.insert(info.text(1));
  return names;
}

// "2026-11-21 22:26:40" (pandas' text of a UTC time) as Unix seconds.
std::optional<double> parse_time(const std::string& text) {
  std::tm tm{};
  std::istringstream in(text);
  in >> std::get_time(&tm, "%Y-%m-%d %H:%M:%S");
  if (in.fail()) return std::nullopt;
  double fraction = 0;
  if (in.peek() == '.') in >> fraction;
  return static_cast<double>(timegm(&tm)) + fraction;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    const auto begin = item.find_first_not_of(" '[\"");
    const auto end = item.find_last_not_of(" ']\"");
    if (begin != std::string::npos) out.push_back(item.substr(begin, end - begin + 1));
  }
  return out;
}

std::string key_text(const Statement& row, int column) {
  if (row.is_null(column)) return "";
  if (row.type(column) == SQLITE_INTEGER) {
    return std::to_string(row.int64(column));
  }
  return row.text(column);
}

}  // namespace

bool is_gssr_export(const fs::path& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return false;
  try {
    Database db(path, SQLITE_OPEN_READONLY);
    return has_table(db, "job_metadata") && !has_table(db, "runs");
  } catch (const std::exception&) {
    return false;
  }
}

std::vector<gssr::Process> read_gssr_export(const fs::path& path, std::vector<std::string>& notes) {
  Database db(path, SQLITE_OPEN_READONLY);
  for (const char* table : {"data", "process_metadata", "job_metadata"}) {
    if (!has_table(db, table)) {
      bad(path, fmt::format("it has no table \"{}\" (gssr's export writes data, "
                            "process_metadata and job_metadata)",
                            table));
    }
  }
  const std::set<std::string> data_columns = columns_of(db, "data");
  for (const char* key : {"job_id", "step_id", "proc_id", "gpu_id", "sample_index"}) {
    if (data_columns.count(key) == 0) bad(path, fmt::format("table data has no column {}", key));
  }
  // The job: label, command, interval and the metrics it lists.
  struct Job {
    std::string label, cmd;
    double sampling_ms = 0;
    std::vector<std::string> metrics;
  };
  std::map<std::pair<std::string, std::string>, Job> jobs;
  {
    const auto cols = columns_of(db, "job_metadata");
    for (const char* key : {"job_id", "step_id", "sampling_time"}) {
      if (cols.count(key) == 0) bad(path, fmt::format("table job_metadata has no column {}", key));
    }
    Statement rows = db.prepare(
        fmt::format("SELECT job_id, step_id, {}, {}, sampling_time, {} FROM job_metadata",
                    cols.count("label") ? "label" : "NULL", cols.count("cmd") ? "cmd" : "NULL",
                    cols.count("metrics") ? "metrics" : "NULL"));
    while (rows.step()) {
      Job job;
      job.label = rows.opt_text(2).value_or("");
      job.cmd = rows.opt_text(3).value_or("");
      job.sampling_ms = rows.real(4);
      if (!(job.sampling_ms > 0) || job.sampling_ms > 3.6e6) {
        bad(path, fmt::format("job_metadata.sampling_time is {} ms", job.sampling_ms));
      }
      if (auto listed = rows.opt_text(5)) job.metrics = split_list(*listed);
      jobs[{key_text(rows, 0), key_text(rows, 1)}] = std::move(job);
    }
  }
  if (jobs.empty()) bad(path, "table job_metadata is empty");
  // The metric columns: those the job lists, each of which must be there; else the known ones.
  std::vector<std::pair<std::size_t, std::string>> metric_columns;
  std::set<std::string> listed;
  for (const auto& [key, job] : jobs) listed.insert(job.metrics.begin(), job.metrics.end());
  for (const auto& name : listed) {
    const auto index = gssr::metric_index(name);
    if (!index) {
      notes.push_back(
          fmt::format("{}: metric {} is not one gssr writes; left out", path.string(), name));
      continue;
    }
    if (data_columns.count(name) == 0) {
      bad(path, fmt::format("job_metadata.metrics lists {}, but table data has no such column "
                            "(a cut-down or edited export)",
                            name));
    }
    metric_columns.emplace_back(*index, name);
  }
  if (listed.empty()) {
    for (std::size_t m = 0; m < gssr::kMetricCount; ++m) {
      if (data_columns.count(gssr::kMetricNames[m]) != 0) {
        metric_columns.emplace_back(m, gssr::kMetricNames[m]);
      }
    }
  }
  if (metric_columns.empty()) bad(path, "table data has no metric column gssr writes");
  // The processes.
  std::map<std::tuple<std::string, std::string, std::int64_t>, gssr::Process> processes;
  {
    const auto cols = columns_of(db, "process_metadata");
    Statement rows =
        db.prepare(fmt::format("SELECT job_id, step_id, proc_id, {}, {}, {} FROM process_metadata",
                               cols.count("hostname") ? "hostname" : "NULL",
                               cols.count("start_time") ? "start_time" : "NULL",
                               cols.count("end_time") ? "end_time" : "NULL"));
    while (rows.step()) {
      gssr::Process p;
      p.source = path.string();
      p.job_id = key_text(rows, 0);
      p.step_id = key_text(rows, 1);
      p.proc_id = rows.int64(2);
      p.hostname = rows.opt_text(3).value_or("");
      const auto job = jobs.find({p.job_id, p.step_id});
      if (job == jobs.end()) {
        bad(path, fmt::format("process {} of job {} step {} has no job_metadata row", p.proc_id,
                              p.job_id, p.step_id));
      }
      p.label = job->second.label;
      p.cmd = job->second.cmd;
      p.sampling_ms = job->second.sampling_ms;
      const auto start = rows.opt_text(4);
      const auto parsed = start ? parse_time(*start) : std::nullopt;
      if (!parsed) {
        bad(path, fmt::format("process {}'s start_time \"{}\" is not a time", p.proc_id,
                              start.value_or("")));
      }
      p.start_time_s = *parsed;
      if (const auto end = rows.opt_text(5)) p.end_time_s = parse_time(*end);
      processes[{p.job_id, p.step_id, p.proc_id}] = std::move(p);
    }
  }
  // The samples, GPU by GPU.
  std::string select = "SELECT job_id, step_id, proc_id, gpu_id, sample_index";
  for (const auto& [index, name] : metric_columns) select += fmt::format(", \"{}\"", name);
  select += " FROM data ORDER BY job_id, step_id, proc_id, gpu_id, sample_index";
  Statement rows = db.prepare(select);
  std::map<std::tuple<std::string, std::string, std::int64_t, std::string>, gssr::GpuSeries> gpus;
  std::size_t nonnumeric = 0;
  while (rows.step()) {
    const std::string job = key_text(rows, 0), step = key_text(rows, 1);
    const std::int64_t proc = rows.int64(2);
    const std::string gpu_id = key_text(rows, 3);
    const std::int64_t k = rows.int64(4);
    if (k < 0 || k >= kMaxSamples)
      bad(path, fmt::format("a sample_index of {} is out of range", k));
    if (processes.count({job, step, proc}) == 0) {
      bad(path, fmt::format("data holds samples of process {} of job {} step {}, which "
                            "process_metadata does not list",
                            proc, job, step));
    }
    gssr::GpuSeries& gpu = gpus[{job, step, proc, gpu_id}];
    gpu.gpu_id = gpu_id;
    for (std::size_t c = 0; c < metric_columns.size(); ++c) {
      std::vector<double>& series = gpu.values[metric_columns[c].first];
      if (series.size() <= static_cast<std::size_t>(k)) {
        series.resize(static_cast<std::size_t>(k) + 1, kNaN);
      }
      const int column = static_cast<int>(c) + 5;
      const int type = rows.type(column);
      if (type == SQLITE_INTEGER || type == SQLITE_FLOAT) {
        series[static_cast<std::size_t>(k)] = rows.real(column);
      } else if (type != SQLITE_NULL) {
        ++nonnumeric;
      }
    }
  }
  if (nonnumeric > 0) {
    notes.push_back(fmt::format("{}: {} values that are not numbers read as missing", path.string(),
                                nonnumeric));
  }
  for (auto& [key, gpu] : gpus) {
    auto& p = processes[{std::get<0>(key), std::get<1>(key), std::get<2>(key)}];
    p.gpus.push_back(std::move(gpu));
  }
  std::vector<gssr::Process> out;
  for (auto& [key, p] : processes) {
    if (p.gpus.empty()) {
      notes.push_back(
          fmt::format("{}: process {} has no samples; left out", path.string(), p.proc_id));
      continue;
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace gpuscope::store
