#include "processes/process_identity.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <functional>
#include <map>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "ranks/rank_context.hpp"
#include "util/small_file.hpp"

namespace gpuscope::processes {
namespace {

// /proc files are small; a larger one is not what it should be (or a huge environment, which
// is then left unread rather than parsed in part).
constexpr std::size_t kMaxFileBytes = std::size_t{1} << 20U;
constexpr std::size_t kMaxCommandLineBytes = 512;
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // "…" in UTF-8
constexpr int kMaxAncestors = 256;

// The whole file, or nullopt when it cannot be read: the process is gone (ENOENT, ESRCH),
// another user's (EACCES), or the path is not a regular file.
std::optional<std::string> read_proc_file(const std::filesystem::path& dir, const char* name) {
  auto text = util::read_small_file((dir / name).string(), kMaxFileBytes);
  if (!text) return std::nullopt;
  return std::move(*text);
}

template <typename Number>
std::optional<Number> parse_number(std::string_view text) {
  Number value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// The next field of text separated by spaces or tabs, removed from text ("" at the end).
std::string_view next_field(std::string_view& text) {
  const std::size_t start = text.find_first_not_of(" \t\n");
  if (start == std::string_view::npos) {
    text = {};
    return {};
  }
  text.remove_prefix(start);
  const std::size_t end = std::min(text.find_first_of(" \t\n"), text.size());
  const std::string_view field = text.substr(0, end);
  text.remove_prefix(end);
  return field;
}

std::optional<std::string> command_from(std::string comm) {
  if (!comm.empty() && comm.back() == '\n') comm.pop_back();
  if (comm.empty()) return std::nullopt;
  return comm;
}

// The arguments joined by spaces, cut to kMaxCommandLineBytes with "…" at the end.
std::optional<std::string> command_line_from(std::string cmdline) {
  // Each argument ends with a NUL; a process that rewrote its title may have none, or many.
  while (!cmdline.empty() && cmdline.back() == '\0') cmdline.pop_back();
  if (cmdline.empty()) return std::nullopt;
  std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
  if (cmdline.size() <= kMaxCommandLineBytes) return cmdline;
  std::size_t cut = kMaxCommandLineBytes - kEllipsis.size();
  // Back off over UTF-8 continuation bytes (10xxxxxx), at most the 3 a character can have, so
  // that no character is cut in two.
  for (int i = 0; i < 3 && cut > 0 && (static_cast<unsigned char>(cmdline[cut]) & 0xC0U) == 0x80U;
       ++i) {
    --cut;
  }
  cmdline.resize(cut);
  cmdline += kEllipsis;
  return cmdline;
}

// The real uid: the first of the four numbers of the "Uid:" line of /proc/PID/status.
std::optional<unsigned> real_uid(std::string_view status) {
  while (!status.empty()) {
    const std::size_t newline = status.find('\n');
    std::string_view line = status.substr(0, newline);
    status = newline == std::string_view::npos ? std::string_view() : status.substr(newline + 1);
    if (!line.starts_with("Uid:")) continue;
    line.remove_prefix(4);
    return parse_number<unsigned>(next_field(line));
  }
  return std::nullopt;
}

// The user name of uid from the password database (files, LDAP, ... as nsswitch.conf says).
std::optional<std::string> user_name(unsigned uid) {
  const long suggested = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::size_t size = suggested > 0 ? static_cast<std::size_t>(suggested) : 4096;
  // ERANGE asks for a larger buffer; an entry past 1 MiB is not one to wait for.
  while (size <= kMaxFileBytes) {
    std::vector<char> buffer(size);
    passwd entry{};
    passwd* result = nullptr;
    const int error =
        ::getpwuid_r(static_cast<uid_t>(uid), &entry, buffer.data(), buffer.size(), &result);
    if (error == ERANGE) {
      size *= 2;
      continue;
    }
    if (error != 0 || result == nullptr || result->pw_name == nullptr || *result->pw_name == '\0') {
      return std::nullopt;
    }
    return std::string(result->pw_name);
  }
  return std::nullopt;
}

struct StatFields {
  std::optional<unsigned> ppid;              // field 4
  std::optional<std::uint64_t> start_ticks;  // field 22
};

// "pid (comm) state ppid pgrp ... starttime ...": comm may hold spaces and ')' itself, and
// nothing after it does, so the fields are counted from the last ')'.
StatFields parse_stat(std::string_view stat) {
  StatFields fields;
  const std::size_t close = stat.rfind(')');
  if (close == std::string_view::npos) return fields;
  std::string_view rest = stat.substr(close + 1);
  constexpr int kFirstField = 3;  // state
  constexpr int kPpidField = 4;
  constexpr int kStartTimeField = 22;
  for (int number = kFirstField; number <= kStartTimeField; ++number) {
    const std::string_view field = next_field(rest);
    if (field.empty()) break;
    if (number == kPpidField) fields.ppid = parse_number<unsigned>(field);
    if (number == kStartTimeField) fields.start_ticks = parse_number<std::uint64_t>(field);
  }
  return fields;
}

std::optional<unsigned> parent_of(unsigned pid, const std::filesystem::path& proc_root) {
  const auto stat = read_proc_file(proc_root / std::to_string(pid), "stat");
  if (!stat) return std::nullopt;
  return parse_stat(*stat).ppid;
}

}  // namespace

std::optional<std::uint64_t> start_ticks(unsigned pid, const std::filesystem::path& proc_root) {
  const auto stat = read_proc_file(proc_root / std::to_string(pid), "stat");
  if (!stat) return std::nullopt;
  return parse_stat(*stat).start_ticks;
}

util::EnvLookup environment_from_block(std::string block) {
  auto variables = std::make_shared<std::map<std::string, std::string, std::less<>>>();
  std::string_view rest = block;
  while (!rest.empty()) {
    const std::size_t end = rest.find('\0');
    const std::string_view entry = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    const std::size_t equals = entry.find('=');
    if (equals == std::string_view::npos || equals == 0) continue;
    // emplace keeps the value already there: the first of a name given twice wins.
    variables->emplace(entry.substr(0, equals), entry.substr(equals + 1));
  }
  return [variables = std::move(variables)](const std::string& name) -> std::optional<std::string> {
    const auto it = variables->find(name);
    if (it == variables->end()) return std::nullopt;
    return it->second;
  };
}

ProcessIdentity resolve_process(unsigned pid, const std::filesystem::path& proc_root) {
  ProcessIdentity identity;
  identity.pid = pid;
  const std::filesystem::path dir = proc_root / std::to_string(pid);
  // stat first: its start time names the process the other files are then read of.
  if (auto stat = read_proc_file(dir, "stat")) {
    const StatFields fields = parse_stat(*stat);
    identity.ppid = fields.ppid;
    identity.start_ticks = fields.start_ticks;
  }
  if (auto comm = read_proc_file(dir, "comm")) identity.command = command_from(std::move(*comm));
  if (auto cmdline = read_proc_file(dir, "cmdline")) {
    identity.command_line = command_line_from(std::move(*cmdline));
  }
  if (auto status = read_proc_file(dir, "status")) identity.uid = real_uid(*status);
  if (identity.uid) identity.user = user_name(*identity.uid);
  if (auto cgroup = read_proc_file(dir, "cgroup")) identity.cgroup = parse_proc_cgroup(*cgroup);
  // Another user's environment is readable only to root (or with CAP_SYS_PTRACE).
  if (auto environ_block = read_proc_file(dir, "environ")) {
    const util::EnvLookup env = environment_from_block(std::move(*environ_block));
    identity.ranks = ranks::read_rank_context(env);
    identity.slurm_job_id = env("SLURM_JOB_ID");
    if (identity.slurm_job_id && identity.slurm_job_id->empty()) identity.slurm_job_id.reset();
  }
  if (!identity.slurm_job_id) identity.slurm_job_id = identity.cgroup.slurm_job_id;
  return identity;
}

bool descends_from(unsigned pid, unsigned ancestor, const std::filesystem::path& proc_root) {
  unsigned current = pid;
  for (int step = 0; step < kMaxAncestors; ++step) {
    if (current == ancestor) return true;
    if (current == 0) return false;  // above init (or a process entered from outside its namespace)
    const auto parent = parent_of(current, proc_root);
    if (!parent || *parent == current) return false;
    current = *parent;
  }
  return current == ancestor;
}

}  // namespace gpuscope::processes
