#include "load/partial.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>

#include "analyze/partial_codec.hpp"
#include "core/error.hpp"
#include "util/environment.hpp"
#include "util/number_text.hpp"
#include "util/small_file.hpp"

namespace gpuscope::load {
namespace {

namespace fs = std::filesystem;
using analyze::PartReader;
using analyze::PartWriter;

constexpr std::string_view kMagic = "gpuscope-partial";  // 16 bytes
constexpr std::uint32_t kFormat = 2;                     // 2: the AMD metrics of schema 1.12

std::optional<unsigned> number(std::string_view text) {
  const auto v = util::parse_unsigned(text);
  if (!v || *v > 1'000'000) return std::nullopt;
  return static_cast<unsigned>(*v);
}

PartialTask checked(unsigned index, unsigned count, const std::string& from) {
  if (count == 0 || index >= count) {
    throw Error::usage(fmt::format("task {} of {} ({}) is not a task", index, count, from), {},
                       "tasks are numbered 0 to N-1 of N");
  }
  return {index, count, {}};
}

void put_check(PartWriter& out, const TimeCheck& c) {
  out.u64(c.rows);
  out.u64(c.outside);
  out.u8(c.by_wall ? 1 : 0);
  out.u64(c.stepped);
  out.f64(c.largest_step_s);
  out.f64(c.first_step_at_s);
}

TimeCheck get_check(PartReader& in) {
  TimeCheck c;
  c.rows = in.u64();
  c.outside = in.u64();
  c.by_wall = in.u8() != 0;
  c.stepped = in.u64();
  c.largest_step_s = in.f64();
  c.first_step_at_s = in.f64();
  return c;
}

[[noreturn]] void not_regular(const fs::path& path, const std::string& kind) {
  throw Error(fmt::format("{} is {}, not a regular file", path.string(), kind),
              "a task's file in the --partial directory is always a regular file gpuscope writes; "
              "something else took its name",
              "remove it, or give --partial a directory of its own");
}

// `path` open to read, or nullptr when there is none. O_NOFOLLOW: a link is refused; O_NONBLOCK:
// a FIFO cannot block the open (and so the timeout); anything but a regular file is refused.
PartialDirectory::InputFile open_regular(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) return nullptr;
    if (error == ELOOP) not_regular(path, "a symbolic link");
    throw Error(fmt::format("cannot read {}", path.string()), std::strerror(error),
                "check that every task may read the --partial directory");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string kind = util::file_kind_text(st.st_mode);
    ::close(fd);
    not_regular(path, kind);
  }
  std::FILE* file = ::fdopen(fd, "rb");
  if (file == nullptr) {
    const int error = errno;
    ::close(fd);
    throw Error(fmt::format("cannot read {}", path.string()), std::strerror(error));
  }
  return PartialDirectory::InputFile(file);
}

// The rest of `in`, at most `limit` bytes of it.
std::string rest_of(std::FILE* in, std::size_t limit) {
  std::string out;
  char buffer[65536];
  while (out.size() < limit) {
    const std::size_t n = std::fread(buffer, 1, std::min(sizeof buffer, limit - out.size()), in);
    if (n == 0) break;
    out.append(buffer, n);
  }
  return out;
}

// A failure file's first line: the magic, "failed", the fingerprint, the launch ("-": none) and
// the tasks that caused it ("-": none, else "0,3").
std::string failure_head(std::uint64_t fingerprint, const std::string& launch,
                         const std::set<unsigned>& caused_by) {
  return fmt::format("{} failed {:016x} {} {}", kMagic, fingerprint, launch.empty() ? "-" : launch,
                     caused_by.empty() ? "-" : fmt::format("{}", fmt::join(caused_by, ",")));
}

// A launcher's name for this start of the tasks, as one word.
std::string launch_word(const std::string& kind, const std::string& id) {
  if (id.empty()) return {};
  std::string out = kind + ":" + id;
  for (char& c : out) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && std::strchr("._:@-", c) == nullptr) {
      c = '_';
    }
  }
  return out;
}

std::string launch_of(const char* rank_name) {
  const std::string name = rank_name;
  if (name == "SLURM_PROCID") {
    const std::string job = util::environment_or_empty("SLURM_JOB_ID");
    const std::string step = util::environment_or_empty("SLURM_STEP_ID");
    return job.empty() || step.empty() ? std::string() : launch_word("slurm", job + "." + step);
  }
  if (name == "OMPI_COMM_WORLD_RANK") {
    const std::string space = util::environment_or_empty("PMIX_NAMESPACE");
    if (!space.empty()) return launch_word("pmix", space);
    return launch_word("ompi", util::environment_or_empty("OMPI_MCA_ess_base_jobid"));
  }
  return {};  // PMI_RANK: Hydra's environment names no launch
}

// One record of a part file: a tag, the length of its body, its body.
std::string record(char tag, const std::string& body) {
  PartWriter out;
  out.u8(static_cast<std::uint8_t>(tag));
  out.text(body);
  return out.take();
}

}  // namespace

PartialTask partial_task(const std::optional<std::string>& given) {
  if (given) {
    const auto slash = given->find('/');
    const auto index = number(given->substr(0, slash));
    const auto count = slash == std::string::npos ? std::nullopt : number(given->substr(slash + 1));
    if (!index || !count) {
      throw Error::usage(fmt::format("--task {} is not R/N", *given), {},
                         "give this task's number and the task count, e.g. --task 3/8");
    }
    return checked(*index, *count, "--task");
  }
  const char* pairs[][2] = {{"SLURM_PROCID", "SLURM_NTASKS"},
                            {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                            {"PMI_RANK", "PMI_SIZE"}};
  for (const auto& [rank_name, size_name] : pairs) {
    const std::string rank = util::environment_or_empty(rank_name);
    const std::string size = util::environment_or_empty(size_name);
    if (rank.empty() || size.empty()) continue;
    const auto index = number(rank), count = number(size);
    if (!index || !count) {
      throw Error::usage(
          fmt::format("{}={} and {}={} are not task numbers", rank_name, rank, size_name, size));
    }
    PartialTask task = checked(*index, *count, fmt::format("{} and {}", rank_name, size_name));
    task.launch = launch_of(rank_name);
    return task;
  }
  throw Error::usage("--partial needs to know which task this is", {},
                     "start the tasks with srun (or mpirun), or give --task R/N");
}

FileRange task_files(std::size_t files, PartialTask task) {
  const std::size_t base = files / task.count, extra = files % task.count;
  const std::size_t first = task.index * base + std::min<std::size_t>(task.index, extra);
  return {first, first + base + (task.index < extra ? 1 : 0)};
}

std::uint64_t partial_fingerprint(const std::vector<fs::path>& files, PartialTask task,
                                  const std::string& options) {
  std::uint64_t hash = 14695981039346656037ULL;
  auto add = [&hash](std::string_view bytes) {
    for (const char c : bytes) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 1099511628211ULL;
    }
    hash ^= 0xff;  // a separator, so ("ab", "c") and ("a", "bc") differ
    hash *= 1099511628211ULL;
  };
  add(fmt::format("{} {} {}", kFormat, task.count, options));
  for (const auto& file : files) {
    struct stat st {};
    const bool ok = ::stat(file.c_str(), &st) == 0;
    add(fmt::format("{} {} {}.{}", file.string(), ok ? st.st_size : -1, ok ? st.st_mtim.tv_sec : 0,
                    ok ? st.st_mtim.tv_nsec : 0));
  }
  return hash;
}

PartialDirectory::PartialDirectory(fs::path dir, PartialTask task, std::uint64_t fingerprint,
                                   double timeout_s)
    : dir_(std::move(dir)), task_(task), fingerprint_(fingerprint), timeout_s_(timeout_s) {
  std::error_code error;
  fs::create_directories(dir_, error);
  if (error || !fs::is_directory(dir_)) {
    throw Error::usage(fmt::format("cannot use {} for the partial summaries", dir_.string()),
                       error ? error.message() : "it is not a directory",
                       "name a directory on a filesystem every task sees");
  }
  for (const char* kind : {"activity", "part", "failed"})
    fs::remove(file(kind, task_.index), error);
  if (task_.index == 0) fs::remove(file("context", 0), error);
}

PartialDirectory::~PartialDirectory() = default;

fs::path PartialDirectory::file(const std::string& kind, unsigned task) const {
  if (kind == "context") return dir_ / fmt::format("context-of-{}.bin", task_.count);
  if (kind == "failed") return dir_ / fmt::format("failed-{}-of-{}.txt", task, task_.count);
  return dir_ / fmt::format("{}-{}-of-{}.bin", kind, task, task_.count);
}

std::string PartialDirectory::header(const std::string& kind) const {
  PartWriter out;
  out.text(kMagic);
  out.u32(kFormat);
  out.u64(fingerprint_);
  out.text(kind);
  return out.take();
}

void PartialDirectory::publish(const std::string& kind, const std::string& bytes) const {
  util::AtomicFile out(file(kind, task_.index));
  std::error_code error = out.open();
  if (!error) error = out.write(header(kind));
  if (!error) error = out.write(bytes);
  if (!error) error = out.commit();
  if (error) {
    throw Error(fmt::format("cannot write {}", file(kind, task_.index).string()), error.message(),
                "check that the directory is writable and has space");
  }
}

bool PartialDirectory::believed(const std::string& head, std::set<unsigned>& caused_by) const {
  std::istringstream words(head);
  std::string magic, failed, fingerprint, launch, causes, extra;
  if (!(words >> magic >> failed >> fingerprint >> launch >> causes) || (words >> extra)) {
    return false;  // not a failure file of this gpuscope (an older one wrote the message only)
  }
  if (magic != kMagic || failed != "failed" ||
      fingerprint != fmt::format("{:016x}", fingerprint_) ||
      launch != (task_.launch.empty() ? "-" : task_.launch)) {
    return false;  // another analysis', or another start of the tasks'
  }
  for (std::size_t at = 0; causes != "-" && at < causes.size();) {
    const std::size_t comma = std::min(causes.find(',', at), causes.size());
    const auto task = number(std::string_view(causes).substr(at, comma - at));
    if (!task) return false;
    caused_by.insert(*task);
    at = comma + 1;
  }
  // Tasks of one srun step are of one run; without a launch's name, a failure this task caused
  // (it never came, or it failed) is of an earlier run: this task is here and has not failed.
  return !task_.launch.empty() || caused_by.count(task_.index) == 0;
}

void PartialDirectory::check_failures(std::string& ignored) const {
  for (unsigned r = 0; r < task_.count; ++r) {
    if (r == task_.index) continue;
    const fs::path path = file("failed", r);
    const InputFile in = open_regular(path);
    if (!in) continue;
    const std::string text = rest_of(in.get(), 64 * 1024);
    const std::size_t newline = std::min(text.find('\n'), text.size());
    std::set<unsigned> caused_by;
    if (!believed(text.substr(0, newline), caused_by)) {
      ignored =
          fmt::format("{} is an earlier run's or another analysis' (not believed)", path.string());
      continue;
    }
    std::string why = newline < text.size() ? text.substr(newline + 1) : std::string();
    while (!why.empty() && why.back() == '\n') why.pop_back();
    caused_by.insert(r);
    caused_by_ = caused_by;
    throw Error(
        fmt::format("task {} of {} of the distributed analysis failed", r, task_.count), why,
        task_.launch.empty()
            ? fmt::format("fix what it says, remove {}/failed-*-of-{}.txt (with --task nothing "
                          "tells an earlier run's failure from this run's) and start all the "
                          "tasks again",
                          dir_.string(), task_.count)
            : "fix what it says and start all the tasks again");
  }
}

PartialDirectory::InputFile PartialDirectory::wait_for(const std::string& kind,
                                                       unsigned task) const {
  const fs::path path = file(kind, task);
  const std::string expected = header(kind);
  const auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::milliseconds(20);
  bool other_analysis = false;
  std::string ignored;  // a failure file not believed, said if the task never comes
  for (;;) {
    check_failures(ignored);
    if (InputFile in = open_regular(path)) {
      std::string head(expected.size(), '\0');
      if (std::fread(head.data(), 1, head.size(), in.get()) == head.size() && head == expected) {
        return in;
      }
      other_analysis = true;  // an earlier analysis' file, until that task replaces it
    }
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > timeout_s_) {
      caused_by_ = {task};
      std::string why = other_analysis
                            ? fmt::format(
                                  "{} is from another analysis (other inputs, options or "
                                  "build)",
                                  path.string())
                            : std::string("that task was not started, or died without a word");
      if (!ignored.empty()) why += "; " + ignored;
      throw Error(fmt::format("no {} from task {} of {} in {} after {:.0f} s", kind, task,
                              task_.count, dir_.string(), waited),
                  why,
                  "start all the tasks together (srun -n N ...), in an empty directory, or raise "
                  "--partial-timeout");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(1000));
  }
}

std::string PartialDirectory::read_whole(const std::string& kind, unsigned task) const {
  const InputFile in = wait_for(kind, task);
  std::string out;
  char buffer[65536];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, in.get())) > 0;) {
    out.append(buffer, n);
  }
  if (std::ferror(in.get()) != 0) {
    throw Error(fmt::format("cannot read {}", file(kind, task).string()), std::strerror(errno));
  }
  return out;
}

void PartialDirectory::write_context(const std::optional<IntensitySeries>& grid) const {
  PartWriter out;
  out.u8(grid ? 1 : 0);
  if (grid) {
    out.text(grid->source);
    out.text(grid->region);
    out.u64(grid->periods.size());
    for (const auto& p : grid->periods) {
      out.i64(p.start_wall_ns);
      out.i64(p.end_wall_ns);
      out.f64(p.g_per_kwh);
      out.text(p.kind.text());
    }
  }
  publish("context", out.take());
}

std::optional<IntensitySeries> PartialDirectory::read_context() const {
  const std::string bytes = read_whole("context", 0);
  PartReader in(bytes, file("context", 0).string());
  if (in.u8() == 0) return std::nullopt;
  IntensitySeries grid;
  grid.source = in.text();
  grid.region = in.text();
  grid.periods.resize(in.count(28));
  for (auto& p : grid.periods) {
    p.start_wall_ns = in.i64();
    p.end_wall_ns = in.i64();
    p.g_per_kwh = in.f64();
    p.kind = IntensityKind::parse(in.text());
  }
  return grid;
}

void PartialDirectory::write_activity(const ActivityShare& share) const {
  PartWriter out;
  analyze::write_activity(out, share.activity);
  out.u64(share.checks.size());
  for (const auto& [source, check] : share.checks) {
    out.u64(source);
    put_check(out, check);
  }
  publish("activity", out.take());
}

void PartialDirectory::read_activities(const std::function<void(ActivityShare&&)>& each) const {
  for (unsigned r = 0; r < task_.count; ++r) {
    if (r == task_.index) continue;
    const std::string bytes = read_whole("activity", r);
    PartReader in(bytes, file("activity", r).string());
    ActivityShare share;
    share.activity = analyze::read_activity(in);
    share.checks.resize(in.count(49));
    for (auto& [source, check] : share.checks) {
      source = in.u64();
      check = get_check(in);
    }
    each(std::move(share));
  }
}

void PartialDirectory::add_device(DeviceShare&& device) {
  if (!part_) {
    part_ = std::make_unique<util::AtomicFile>(file("part", task_.index));
    std::error_code error = part_->open();
    if (!error) error = part_->write(header("part"));
    if (error) {
      throw Error(fmt::format("cannot write {}", part_->target().string()), error.message(),
                  "check that the directory is writable and has space");
    }
  }
  counts_.take(device.prepared);
  PartWriter out;
  out.u64(device.source);
  out.u32(device.device);
  analyze::write_device(out, device.prepared);
  if (const auto error = part_->write(record('D', out.take()))) {
    throw Error(fmt::format("cannot write {}", part_->target().string()), error.message(),
                "check that the directory has space");
  }
  ++devices_;
}

void PartialDirectory::finish_part() {
  if (!part_) {
    part_ = std::make_unique<util::AtomicFile>(file("part", task_.index));
    if (const auto error = part_->open()) {
      throw Error(fmt::format("cannot write {}", part_->target().string()), error.message());
    }
    (void)part_->write(header("part"));
  }
  PartWriter counts;
  analyze::write_counts(counts, counts_);
  PartWriter end;
  end.u64(devices_);
  std::error_code error = part_->write(record('C', counts.take()));
  if (!error) error = part_->write(record('E', end.take()));
  if (!error) error = part_->commit();
  if (error) {
    throw Error(fmt::format("cannot write {}", part_->target().string()), error.message(),
                "check that the directory has space");
  }
  part_.reset();
}

void PartialDirectory::read_parts(
    const std::function<void(DeviceShare&&)>& device,
    const std::function<void(analyze::OverallCounts&&)>& counts) const {
  for (unsigned r = 0; r < task_.count; ++r) {
    const std::string name = file("part", r).string();
    const InputFile in = wait_for("part", r);
    std::uint64_t devices = 0;
    for (bool end = false; !end;) {
      char tag = 0;
      std::uint64_t size = 0;
      if (std::fread(&tag, 1, 1, in.get()) != 1 ||
          std::fread(&size, sizeof size, 1, in.get()) != 1 || size > (std::uint64_t{1} << 32)) {
        PartReader({}, name).damaged("a record is cut off");
      }
      std::string body(size, '\0');
      if (std::fread(body.data(), 1, size, in.get()) != size) {
        PartReader({}, name).damaged("a record is cut off");
      }
      PartReader reader(body, name);
      if (tag == 'D') {
        DeviceShare share;
        share.source = reader.u64();
        share.device = reader.u32();
        share.prepared = analyze::read_device(reader);
        device(std::move(share));
        ++devices;
      } else if (tag == 'C') {
        counts(analyze::read_counts(reader));
      } else if (tag == 'E') {
        if (reader.u64() != devices) reader.damaged("it lists fewer GPUs than it says");
        end = true;
      } else {
        reader.damaged(fmt::format("a record of unknown kind {}", static_cast<int>(tag)));
      }
      if (!reader.done()) reader.damaged("a record is longer than its contents");
    }
  }
}

void PartialDirectory::fail(const std::string& message) const noexcept {
  try {
    util::AtomicFile out(file("failed", task_.index));
    const std::string head = failure_head(fingerprint_, task_.launch, caused_by_);
    if (!out.open() && !out.write(head + "\n" + message + "\n")) (void)out.commit();
  } catch (...) {  // the task fails anyway: its own message is what matters
  }
}

}  // namespace gpuscope::load
