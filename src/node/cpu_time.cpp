#include "node/cpu_time.hpp"

#include <unistd.h>

#include <sstream>

#include "core/clock.hpp"
#include "util/number_text.hpp"
#include "util/small_file.hpp"

namespace gpuscope::node {

namespace {

constexpr std::size_t kMaxBytes = std::size_t{1} << 20;  // /proc/stat of a large node

std::optional<std::string> read_text(const std::filesystem::path& path) {
  auto text = util::read_small_file(path.string(), kMaxBytes);
  if (!text) return std::nullopt;
  return std::move(*text);
}

std::optional<std::string> v2_path(const std::filesystem::path& file) {
  const auto text = read_text(file);
  if (!text) return std::nullopt;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("0::", 0) == 0 && line.size() > 3) return line.substr(3);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> cgroup_of(unsigned pid, const std::filesystem::path& proc_root) {
  if (auto path = v2_path(proc_root / std::to_string(pid) / "cgroup")) return path;
  return v2_path(proc_root / "self" / "cgroup");
}

std::optional<NodeTimes> parse_proc_stat(const std::string& text, long ticks_per_second) {
  if (text.rfind("cpu ", 0) != 0 || ticks_per_second <= 0) return std::nullopt;
  std::istringstream line(text.substr(4, text.find('\n') - 4));
  // user nice system idle iowait irq softirq steal (guest and guest_nice are inside user/nice).
  std::uint64_t field[8] = {};
  for (auto& value : field) {
    std::string word;
    if (!(line >> word)) return std::nullopt;
    const auto number = util::parse_unsigned(word);
    if (!number) return std::nullopt;
    value = static_cast<std::uint64_t>(*number);
  }
  const std::uint64_t idle = field[3] + field[4];
  std::uint64_t total = 0;
  for (const auto value : field) total += value;
  const auto usec = [&](std::uint64_t ticks) {
    return static_cast<std::int64_t>(ticks * 1'000'000 /
                                     static_cast<std::uint64_t>(ticks_per_second));
  };
  return NodeTimes{usec(total - idle), usec(total)};
}

std::optional<std::int64_t> parse_cpu_stat_usage(const std::string& text) {
  std::istringstream lines(text);
  std::string key, value;
  while (lines >> key >> value) {
    if (key != "usage_usec") continue;
    const auto number = util::parse_unsigned(value);
    if (!number) return std::nullopt;
    return static_cast<std::int64_t>(*number);
  }
  return std::nullopt;
}

NodeCpuTime read_cpu_time(const std::optional<std::string>& cgroup,
                          const std::filesystem::path& sysfs_root,
                          const std::filesystem::path& proc_root) {
  NodeCpuTime out;
  out.cgroup = cgroup;
  if (cgroup) {
    // The cgroup's path is absolute within the hierarchy: "/" is its root.
    const auto relative = std::filesystem::path(*cgroup).relative_path();
    if (const auto text = read_text(sysfs_root / "fs" / "cgroup" / relative / "cpu.stat")) {
      out.cgroup_usage_usec = parse_cpu_stat_usage(*text);
    }
  }
  if (const auto text = read_text(proc_root / "stat")) {
    if (const auto times = parse_proc_stat(*text, sysconf(_SC_CLK_TCK))) {
      out.node_busy_usec = times->busy_usec;
      out.node_total_usec = times->total_usec;
    }
  }
  out.mono_ns = mono_now_ns();
  out.wall_ns = wall_now_ns();
  return out;
}

}  // namespace gpuscope::node
