#include "ingest/tools/gssr_export.hpp"

#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <iomanip>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "core/error.hpp"
#include "store/foreign_sqlite.hpp"

namespace gpuscope::ingest::gssr {
namespace {

namespace fs = std::filesystem;
using store::ForeignDatabase;
using store::ForeignRows;
using store::ValueType;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t kMaxSamples = 100'000'000;  // per GPU: far past any gssr run

[[noreturn]] void bad(const fs::path& path, const std::string& what) {
  throw Error(fmt::format("{} is not a gssr export gpuscope can read", path.string()), what,
              "give the file gssr analyze --export wrote, or the profile folder itself "
              "(docs/gssr.md)");
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

std::string key_text(const ForeignRows& row, int column) {
  if (row.is_null(column)) return "";
  if (row.type(column) == ValueType::Integer) return std::to_string(row.int64(column));
  return row.text(column);
}

// A job of the export: its label, command, interval and the metrics it lists.
struct Job {
  std::string label, cmd;
  double sampling_ms = 0;
  std::vector<std::string> metrics;
};
using JobKey = std::pair<std::string, std::string>;  // job, step
using ProcessKey = std::tuple<std::string, std::string, std::int64_t>;
// A metric column of table data: gssr's metric index and the column's name.
using MetricColumns = std::vector<std::pair<std::size_t, std::string>>;

// The three tables and data's key columns are there.
void check_tables(const ForeignDatabase& db, const std::set<std::string>& data_columns) {
  for (const char* table : {"data", "process_metadata", "job_metadata"}) {
    if (!db.has_table(table)) {
      bad(db.path(), fmt::format("it has no table \"{}\" (gssr's export writes data, "
                                 "process_metadata and job_metadata)",
                                 table));
    }
  }
  for (const char* key : {"job_id", "step_id", "proc_id", "gpu_id", "sample_index"}) {
    if (data_columns.count(key) == 0) {
      bad(db.path(), fmt::format("table data has no column {}", key));
    }
  }
}

std::map<JobKey, Job> read_jobs(const ForeignDatabase& db) {
  const auto cols = db.columns("job_metadata");
  for (const char* key : {"job_id", "step_id", "sampling_time"}) {
    if (cols.count(key) == 0) {
      bad(db.path(), fmt::format("table job_metadata has no column {}", key));
    }
  }
  ForeignRows rows = db.query(
      fmt::format("SELECT job_id, step_id, {}, {}, sampling_time, {} FROM job_metadata",
                  cols.count("label") ? "label" : "NULL", cols.count("cmd") ? "cmd" : "NULL",
                  cols.count("metrics") ? "metrics" : "NULL"));
  std::map<JobKey, Job> jobs;
  while (rows.next()) {
    Job job;
    job.label = rows.opt_text(2).value_or("");
    job.cmd = rows.opt_text(3).value_or("");
    job.sampling_ms = rows.real(4);
    if (!(job.sampling_ms > 0) || job.sampling_ms > 3.6e6) {
      bad(db.path(), fmt::format("job_metadata.sampling_time is {} ms", job.sampling_ms));
    }
    if (auto listed = rows.opt_text(5)) job.metrics = split_list(*listed);
    jobs[{key_text(rows, 0), key_text(rows, 1)}] = std::move(job);
  }
  if (jobs.empty()) bad(db.path(), "table job_metadata is empty");
  return jobs;
}

// The metric columns to read: those the jobs list, each of which must be there; else the known
// ones the table has.
MetricColumns metric_columns(const fs::path& path, const std::map<JobKey, Job>& jobs,
                             const std::set<std::string>& data_columns,
                             std::vector<std::string>& notes) {
  MetricColumns out;
  std::set<std::string> listed;
  for (const auto& [key, job] : jobs) listed.insert(job.metrics.begin(), job.metrics.end());
  for (const auto& name : listed) {
    const auto index = metric_index(name);
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
    out.emplace_back(*index, name);
  }
  if (listed.empty()) {
    for (std::size_t m = 0; m < kMetricCount; ++m) {
      if (data_columns.count(kMetricNames[m]) != 0) out.emplace_back(m, kMetricNames[m]);
    }
  }
  if (out.empty()) bad(path, "table data has no metric column gssr writes");
  return out;
}

std::map<ProcessKey, Process> read_processes(const ForeignDatabase& db,
                                             const std::map<JobKey, Job>& jobs) {
  const auto cols = db.columns("process_metadata");
  ForeignRows rows =
      db.query(fmt::format("SELECT job_id, step_id, proc_id, {}, {}, {} FROM process_metadata",
                           cols.count("hostname") ? "hostname" : "NULL",
                           cols.count("start_time") ? "start_time" : "NULL",
                           cols.count("end_time") ? "end_time" : "NULL"));
  std::map<ProcessKey, Process> processes;
  while (rows.next()) {
    Process p;
    p.source = db.path().string();
    p.job_id = key_text(rows, 0);
    p.step_id = key_text(rows, 1);
    p.proc_id = rows.int64(2);
    p.hostname = rows.opt_text(3).value_or("");
    const auto job = jobs.find({p.job_id, p.step_id});
    if (job == jobs.end()) {
      bad(db.path(), fmt::format("process {} of job {} step {} has no job_metadata row", p.proc_id,
                                 p.job_id, p.step_id));
    }
    p.label = job->second.label;
    p.cmd = job->second.cmd;
    p.sampling_ms = job->second.sampling_ms;
    const auto start = rows.opt_text(4);
    const auto parsed = start ? parse_time(*start) : std::nullopt;
    if (!parsed) {
      bad(db.path(), fmt::format("process {}'s start_time \"{}\" is not a time", p.proc_id,
                                 start.value_or("")));
    }
    p.start_time_s = *parsed;
    if (const auto end = rows.opt_text(5)) p.end_time_s = parse_time(*end);
    processes[{p.job_id, p.step_id, p.proc_id}] = std::move(p);
  }
  return processes;
}

// The samples, GPU by GPU, into each process's series.
void read_samples(const ForeignDatabase& db, const MetricColumns& columns,
                  std::map<ProcessKey, Process>& processes, std::vector<std::string>& notes) {
  std::string select = "SELECT job_id, step_id, proc_id, gpu_id, sample_index";
  for (const auto& [index, name] : columns) select += fmt::format(", \"{}\"", name);
  select += " FROM data ORDER BY job_id, step_id, proc_id, gpu_id, sample_index";
  ForeignRows rows = db.query(select);
  std::map<std::tuple<std::string, std::string, std::int64_t, std::string>, GpuSeries> gpus;
  std::size_t nonnumeric = 0;
  while (rows.next()) {
    const std::string job = key_text(rows, 0), step = key_text(rows, 1);
    const std::int64_t proc = rows.int64(2);
    const std::string gpu_id = key_text(rows, 3);
    const std::int64_t k = rows.int64(4);
    if (k < 0 || k >= kMaxSamples) {
      bad(db.path(), fmt::format("a sample_index of {} is out of range", k));
    }
    if (processes.count({job, step, proc}) == 0) {
      bad(db.path(), fmt::format("data holds samples of process {} of job {} step {}, which "
                                 "process_metadata does not list",
                                 proc, job, step));
    }
    GpuSeries& gpu = gpus[{job, step, proc, gpu_id}];
    gpu.gpu_id = gpu_id;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      std::vector<double>& series = gpu.values[columns[c].first];
      const auto at = static_cast<std::size_t>(k);
      if (series.size() <= at) series.resize(at + 1, kNaN);
      const int column = static_cast<int>(c) + 5;
      const ValueType type = rows.type(column);
      if (type == ValueType::Integer || type == ValueType::Real) {
        series[at] = rows.real(column);
      } else if (type != ValueType::Null) {
        ++nonnumeric;
      }
    }
  }
  if (nonnumeric > 0) {
    notes.push_back(fmt::format("{}: {} values that are not numbers read as missing",
                                db.path().string(), nonnumeric));
  }
  for (auto& [key, gpu] : gpus) {
    processes[{std::get<0>(key), std::get<1>(key), std::get<2>(key)}].gpus.push_back(
        std::move(gpu));
  }
}

}  // namespace

bool is_export(const fs::path& path) {
  return ForeignDatabase::holds_table(path, "job_metadata", "runs");
}

std::vector<Process> read_export(const fs::path& path, std::vector<std::string>& notes) {
  try {
    const ForeignDatabase db(path);
    const std::set<std::string> data_columns = db.columns("data");
    check_tables(db, data_columns);
    const auto jobs = read_jobs(db);
    const MetricColumns columns = metric_columns(path, jobs, data_columns, notes);
    auto processes = read_processes(db, jobs);
    read_samples(db, columns, processes, notes);
    std::vector<Process> out;
    for (auto& [key, p] : processes) {
      if (p.gpus.empty()) {
        notes.push_back(
            fmt::format("{}: process {} has no samples; left out", path.string(), p.proc_id));
        continue;
      }
      out.push_back(std::move(p));
    }
    return out;
  } catch (const store::ForeignSqliteError& e) {
    bad(path, e.what());
  }
}

}  // namespace gpuscope::ingest::gssr
