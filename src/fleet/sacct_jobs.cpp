#include "fleet/sacct_jobs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "ingest/monitoring/slurm_accounting.hpp"
#include "util/local_time.hpp"
#include "util/number_text.hpp"

namespace gpuscope::fleet {

namespace {

constexpr std::size_t kFields = 12;  // kSacctJobsFields
constexpr std::size_t kQuoted = 5;   // unreadable lines quoted

std::string local_time(std::int64_t ms) {
  return util::local_text(ms, "%Y-%m-%dT%H:%M:%S");
}

// The first `count - 1` fields split at '|', the rest of the line as the last one.
std::vector<std::string_view> fields(std::string_view line, std::size_t count) {
  std::vector<std::string_view> out;
  std::size_t begin = 0;
  while (out.size() + 1 < count) {
    const std::size_t bar = line.find('|', begin);
    if (bar == std::string_view::npos) break;
    out.push_back(line.substr(begin, bar - begin));
    begin = bar + 1;
  }
  out.push_back(line.substr(begin));
  return out;
}

std::string first_word(std::string_view text) {
  return std::string(text.substr(0, text.find(' ')));
}

std::optional<int> exit_code(std::string_view text) {
  const auto code = util::parse_unsigned(text.substr(0, text.find(':')));
  if (!code) return std::nullopt;
  return static_cast<int>(*code);
}

bool still_running(const std::string& state) {
  return state == "RUNNING" || state == "SUSPENDED" || state == "COMPLETING" ||
         state == "REQUEUED" || state == "RESIZING";
}

enum class LineRead { Job, NoGpus, NotStarted };

// One allocation line into `job`; throws Error when a field cannot be read.
LineRead read_line(const std::vector<std::string_view>& f, std::int64_t now_ms, SiteJob& job) {
  job.id = std::string(f[0]);
  job.shown_id = std::string(f[1]);
  job.user = std::string(f[2]);
  job.account = std::string(f[3]);
  job.partition = std::string(f[4]);
  job.state = first_word(f[5]);
  job.name = std::string(f[11]);
  if (job.id.empty()) throw Error("no JobIDRaw");
  const auto gpus = ingest::allocated_gpus(f[9]);
  const auto start = ingest::sacct_time_ms(f[6]);
  if (!start || job.state == "PENDING") return LineRead::NotStarted;
  if (!gpus || *gpus <= 0) return LineRead::NoGpus;
  job.gpus = *gpus;
  job.gpu_model = allocated_gpu_type(f[9]);
  job.running = still_running(job.state);
  const auto end = ingest::sacct_time_ms(f[7]);
  job.start_ms = *start;
  job.end_ms = end && !job.running ? *end : now_ms;
  if (job.end_ms < job.start_ms) {
    throw Error(fmt::format("it ends ({}) before it starts ({})", f[7], f[6]));
  }
  job.exit_code = exit_code(f[10]);
  job.nodes = ingest::expand_hostlist(f[8]);
  job.gpu_hours = static_cast<double>(job.end_ms - job.start_ms) / 3.6e6 * job.gpus;
  return LineRead::Job;
}

}  // namespace

std::vector<std::string> sacct_jobs_arguments(const tsdb::Window& window, const JobFilter& filter) {
  std::vector<std::string> out = {"--allusers",  "--allocations",
                                  "--noheader",  "--parsable2",
                                  "--starttime", local_time(window.start_ms),
                                  "--endtime",   local_time(window.end_ms),
                                  "--format",    std::string(kSacctJobsFields)};
  auto add = [&](const char* option, const std::vector<std::string>& values) {
    if (values.empty()) return;
    out.emplace_back(option);
    out.push_back(fmt::format("{}", fmt::join(values, ",")));
  };
  add("--user", filter.users);
  add("--accounts", filter.accounts);
  add("--partition", filter.partitions);
  add("--state", filter.states);
  return out;
}

std::vector<std::string> sacct_one_job_arguments(const std::string& job_id) {
  return {"--jobs",
          job_id,
          "--allocations",
          "--noheader",
          "--parsable2",
          "--format",
          std::string(kSacctJobsFields)};
}

SacctRead read_sacct_jobs(std::string_view output, std::int64_t now_ms) {
  SacctRead read;
  std::size_t begin = 0;
  while (begin < output.size()) {
    std::size_t end = output.find('\n', begin);
    if (end == std::string_view::npos) end = output.size();
    const std::string_view line = output.substr(begin, end - begin);
    begin = end + 1;
    if (line.empty()) continue;
    const auto f = fields(line, kFields);
    std::string why;
    if (f.size() < kFields) {
      why = fmt::format("{} fields, not {}", f.size(), kFields);
    } else {
      SiteJob job;
      try {
        switch (read_line(f, now_ms, job)) {
          case LineRead::Job:
            read.jobs.push_back(std::move(job));
            break;
          case LineRead::NoGpus:
            ++read.without_gpus;
            break;
          case LineRead::NotStarted:
            ++read.not_started;
            break;
        }
        continue;
      } catch (const Error& e) {
        why = e.what();
      }
    }
    if (++read.unreadable_count <= kQuoted) {
      read.unreadable.push_back(fmt::format("'{}' ({})", line.substr(0, 200), why));
    }
  }
  return read;
}

std::string allocated_gpu_type(std::string_view tres) {
  std::string type;
  std::size_t begin = 0;
  while (begin <= tres.size()) {
    std::size_t end = tres.find(',', begin);
    if (end == std::string_view::npos) end = tres.size();
    const std::string_view item = tres.substr(begin, end - begin);
    begin = end + 1;
    if (item.substr(0, 9) != "gres/gpu:") continue;
    const std::string_view name = item.substr(9, item.find('=') - 9);
    if (!type.empty() && type != name) return "";
    type = std::string(name);
  }
  return type;
}

}  // namespace gpuscope::fleet
