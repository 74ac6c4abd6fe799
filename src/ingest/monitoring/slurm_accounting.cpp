#include "ingest/monitoring/slurm_accounting.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <ctime>

#include "core/error.hpp"
#include "util/number_text.hpp"

namespace gpuscope::ingest {

namespace {

constexpr std::size_t kMaxHosts = 100'000;

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> out;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = text.find(separator, begin);
    out.push_back(text.substr(begin, end == std::string_view::npos ? end : end - begin));
    if (end == std::string_view::npos) return out;
    begin = end + 1;
  }
}

// Splits a host list at the commas outside brackets.
std::vector<std::string_view> top_level_items(std::string_view list) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || (list[i] == ',' && depth == 0)) {
      if (i > begin) out.push_back(list.substr(begin, i - begin));
      begin = i + 1;
    } else if (list[i] == '[') {
      ++depth;
    } else if (list[i] == ']') {
      --depth;
    }
  }
  return out;
}

Error bad_hostlist(std::string_view list, std::string_view why) {
  return Error(fmt::format("cannot read the host list '{}'", list), std::string(why),
               "SLURM writes host lists as n[1-4,7]; check the node list sacct printed");
}

// "1-3,07" inside brackets → "1","2","3","07" (a range keeps the width of its first bound).
std::vector<std::string> expand_range(std::string_view list, std::string_view ranges) {
  std::vector<std::string> out;
  for (const std::string_view item : split(ranges, ',')) {
    const std::size_t dash = item.find('-');
    const std::string_view low = item.substr(0, dash);
    const std::string_view high = dash == std::string_view::npos ? low : item.substr(dash + 1);
    const auto a = util::parse_unsigned(low);
    const auto b = util::parse_unsigned(high);
    if (!a || !b || *b < *a) throw bad_hostlist(list, fmt::format("'{}' is not a range", item));
    if (*b - *a > kMaxHosts) throw bad_hostlist(list, "more than 100 000 hosts");
    for (auto n = *a; n <= *b; ++n) out.push_back(fmt::format("{:0{}}", n, low.size()));
  }
  return out;
}

void expand_item(std::string_view list, std::string_view item, std::vector<std::string>& out) {
  std::vector<std::string> names{""};
  std::size_t at = 0;
  while (at < item.size()) {
    const std::size_t open = item.find('[', at);
    const std::string_view plain =
        item.substr(at, open == std::string_view::npos ? open : open - at);
    for (auto& n : names) n += plain;
    if (open == std::string_view::npos) break;
    const std::size_t close = item.find(']', open);
    if (close == std::string_view::npos) throw bad_hostlist(list, "a '[' is never closed");
    std::vector<std::string> next;
    const auto suffixes = expand_range(list, item.substr(open + 1, close - open - 1));
    for (const auto& n : names) {
      for (const auto& suffix : suffixes) next.push_back(n + suffix);
      if (next.size() > kMaxHosts) throw bad_hostlist(list, "more than 100 000 hosts");
    }
    names = std::move(next);
    at = close + 1;
  }
  for (auto& n : names) out.push_back(std::move(n));
  if (out.size() > kMaxHosts) throw bad_hostlist(list, "more than 100 000 hosts");
}

std::string first_word(std::string_view state) {
  return std::string(state.substr(0, state.find(' ')));
}

}  // namespace

std::optional<int> allocated_gpus(std::string_view tres) {
  std::optional<int> total;
  for (const std::string_view item : split(tres, ',')) {
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = item.substr(0, eq);
    // The untyped count; typed counts (gres/gpu:a100) repeat it, so they are used only alone.
    const bool untyped = key == "gres/gpu";
    if (!untyped && key.substr(0, 9) != "gres/gpu:") continue;
    const auto n = util::parse_unsigned(item.substr(eq + 1));
    if (!n) continue;
    if (untyped) return static_cast<int>(*n);
    total = total.value_or(0) + static_cast<int>(*n);
  }
  return total;
}

std::vector<std::string> sacct_job_arguments(const std::string& job_id) {
  return {"--jobs",
          job_id,
          "--allocations",
          "--noheader",
          "--parsable2",
          "--format",
          std::string(kSacctJobFields)};
}

std::vector<std::string> sacct_overlap_arguments(const std::vector<std::string>& nodes,
                                                 const tsdb::Window& window) {
  auto local = [](std::int64_t ms) {
    const std::time_t t = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    localtime_r(&t, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
    return std::string(text);
  };
  return {"--nodelist",  fmt::format("{}", fmt::join(nodes, ",")),
          "--starttime", local(window.start_ms),
          "--endtime",   local(window.end_ms),
          "--allusers",  "--allocations",
          "--noheader",  "--parsable2",
          "--format",    std::string(kSacctOverlapFields)};
}

std::optional<std::int64_t> sacct_time_ms(std::string_view text) {
  if (text.empty() || text == "Unknown" || text == "None") return std::nullopt;
  std::tm tm{};
  const std::string copy(text);
  const char* end = strptime(copy.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr || *end != '\0') {
    throw Error(fmt::format("cannot read sacct's time '{}'", text), {},
                "gpuscope expects SLURM's ISO 8601 form (SLURM_TIME_FORMAT unset or "
                "'standard')");
  }
  tm.tm_isdst = -1;  // local time, as sacct printed it
  return static_cast<std::int64_t>(std::mktime(&tm)) * 1000;
}

std::vector<std::string> expand_hostlist(std::string_view list) {
  std::vector<std::string> out;
  if (list.empty() || list == "None assigned") return out;
  for (const std::string_view item : top_level_items(list)) expand_item(list, item, out);
  return out;
}

JobWindow read_sacct_job(std::string_view output, const std::string& job_id, std::int64_t now_ms) {
  for (const std::string_view line : split(output, '\n')) {
    const auto f = split(line, '|');
    if (f.size() < 11 || f[0] != job_id) continue;
    const std::string state = first_word(f[3]);
    const auto start = sacct_time_ms(f[4]);
    if (!start || state == "PENDING") {
      throw Error(fmt::format("job {} has not started ({})", job_id, f[3]),
                  "there is nothing to analyse before a job runs",
                  "run gpuscope job again once squeue shows it running");
    }
    JobWindow job;
    job.kind = "slurm";
    job.id = job_id;
    job.name = std::string(f[1]);
    job.user = std::string(f[2]);
    job.running = state == "RUNNING" || state == "SUSPENDED" || state == "COMPLETING";
    // sacct's times are whole seconds, cut down: the job ran until before End + 1 s.
    const auto end = sacct_time_ms(f[5]);
    job.window = {*start, end && !job.running ? *end + 999 : now_ms};
    job.nodes = expand_hostlist(f[7]);
    job.gpus = allocated_gpus(f[8]);
    if (job.nodes.empty()) {
      throw Error(fmt::format("sacct names no node for job {} ('{}')", job_id, f[7]),
                  "a job that never got nodes used no GPU");
    }
    return job;
  }
  throw Error(fmt::format("SLURM's accounting has no job {}", job_id),
              "sacct printed no allocation line for it",
              "check the id (sacct -j ID), and that this machine's sacct reaches the cluster's "
              "slurmdbd (SLURM_CONF, -M CLUSTER)");
}

std::vector<std::string> read_sacct_overlaps(std::string_view output, const std::string& job_id) {
  std::vector<std::string> out;
  for (const std::string_view line : split(output, '\n')) {
    const auto f = split(line, '|');
    if (f.size() < 2 || f[0].empty() || f[0] == job_id) continue;
    if (f[0].find('.') != std::string_view::npos) continue;  // a step of some job
    if (f.size() >= 5 && first_word(f[4]) == "PENDING") continue;
    out.emplace_back(f[0]);
  }
  return out;
}

}  // namespace gpuscope::ingest
