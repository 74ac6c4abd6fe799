#include "ingest/logs/log_run.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "store/run_writer.hpp"
#include "store/update_run_file.hpp"
#include "util/utc_time.hpp"

namespace gpuscope::ingest {
namespace {

// Rows held before the start and interval are decided; rows between flushes after: the writer
// thread writes one batch while the next is read, so an import holds about two (~13 MB each).
constexpr std::size_t kLookahead = 4096;
constexpr std::int64_t kFlushRows = 32768;

// The median positive gap between consecutive rows of one GPU; 0 when there is none.
std::int64_t median_gap(const std::vector<SampleRow>& rows) {
  std::map<unsigned, std::int64_t> last;
  std::vector<std::int64_t> gaps;
  for (const auto& row : rows) {
    const auto it = last.find(row.device_index);
    if (it != last.end() && row.wall_ns > it->second) gaps.push_back(row.wall_ns - it->second);
    last[row.device_index] = row.wall_ns;
  }
  if (gaps.empty()) return 0;
  auto mid = gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2);
  std::nth_element(gaps.begin(), mid, gaps.end());
  return *mid;
}

}  // namespace

std::string interval_text(std::int64_t ns) {
  if (ns >= 1'000'000'000) return fmt::format("{:g} s", static_cast<double>(ns) / 1e9);
  return fmt::format("{:g} ms", static_cast<double>(ns) / 1e6);
}

LogRun::LogRun(RunTarget& target, RunInfo info, std::int64_t interval_ns)
    : target_(target), info_(std::move(info)), interval_ns_(interval_ns) {
  pending_.reserve(kLookahead);
}

LogRun::~LogRun() = default;

DeviceDescription& LogRun::device(unsigned index) {
  auto [it, added] = devices_.try_emplace(index);
  if (added) it->second.index = index;
  return it->second;
}

void LogRun::push(SampleRow& row, std::int64_t line) {
  screen_.screen(row, line);
  device(row.device_index);
  auto [last, added] = last_of_.try_emplace(row.device_index, row.wall_ns);
  if (!added && row.wall_ns < last->second) {
    if (backwards_++ == 0) first_back_ns_ = row.wall_ns;
    largest_back_ns_ = std::max(largest_back_ns_, last->second - row.wall_ns);
  }
  last->second = row.wall_ns;
  if (rows_ == 0) first_ns_ = row.wall_ns;
  first_ns_ = std::min(first_ns_, row.wall_ns);
  last_ns_ = std::max(last_ns_, row.wall_ns);
  ++rows_;
  if (!writer_) {
    pending_.push_back(row);
    if (pending_.size() >= kLookahead) start();
    return;
  }
  write(row);
}

void LogRun::push(const HealthRow& row) {
  if (!writer_) {
    pending_health_.push_back(row);
    return;
  }
  write(row);
}

void LogRun::push(Event event) {
  if (!writer_) {
    pending_events_.push_back(std::move(event));
    return;
  }
  write(event);
}

void LogRun::push(GpuProcess process) {
  if (!writer_) {
    pending_processes_.push_back(std::move(process));
    return;
  }
  write(process);
}

void LogRun::push(const ProcessSample& sample) {
  if (!writer_) {
    pending_process_rows_.push_back(sample);
    return;
  }
  write(sample);
}

void LogRun::start() {
  std::int64_t first = pending_.front().wall_ns;
  for (const auto& row : pending_) first = std::min(first, row.wall_ns);
  info_.start_wall_ns = first;
  info_.start_mono_ns = 0;  // a log has wall times only: mono_ns is the time since its start
  if (interval_ns_ <= 0) interval_ns_ = median_gap(pending_);
  info_.sampling_interval_ns = interval_ns_;
  writer_ = target_.add_run(info_, {});
  for (auto& row : pending_) write(row);
  for (const auto& row : pending_health_) write(row);
  for (auto& event : pending_events_) write(event);
  for (auto& process : pending_processes_) write(process);
  for (const auto& sample : pending_process_rows_) write(sample);
  pending_.clear();
  pending_.shrink_to_fit();
  pending_health_ = {};
  pending_events_ = {};
  pending_processes_ = {};
  pending_process_rows_ = {};
}

void LogRun::write(SampleRow& row) {
  row.mono_ns = row.wall_ns - info_.start_wall_ns;
  writer_->push(row);
  if (++since_flush_ >= kFlushRows) {
    writer_->flush_behind();
    since_flush_ = 0;
  }
}

void LogRun::write(HealthRow row) {
  row.mono_ns = row.wall_ns - info_.start_wall_ns;
  writer_->push(row);
}

void LogRun::write(Event& event) {
  event.mono_ns = event.wall_ns - info_.start_wall_ns;
  writer_->push(std::move(event));
}

void LogRun::write(GpuProcess& process) {
  process.first_mono_ns = process.first_wall_ns - info_.start_wall_ns;
  writer_->push(std::move(process));
}

void LogRun::write(ProcessSample sample) {
  sample.mono_ns = sample.wall_ns - info_.start_wall_ns;
  writer_->push(sample);
}

bool LogRun::finish(std::vector<std::string> problems) {
  if (finished_) return writer_ != nullptr;
  finished_ = true;
  if (!writer_ && pending_.empty()) return false;
  if (!writer_) start();
  RunEnd end;
  end.status = RunStatus::Finished;
  end.end_wall_ns = last_ns_;
  end.end_mono_ns = last_ns_ - info_.start_wall_ns;
  end.samples_taken = rows_;
  end.problems = std::move(problems);
  if (backwards_ > 0) {
    const std::string back = fmt::format(
        "{}: times go back {} time{}, by up to {} (first at {}): a clock set back, or two logs "
        "interleaved; the samples are kept in the order logged",
        info_.label, backwards_, backwards_ == 1 ? "" : "s", interval_text(largest_back_ns_),
        util::utc_text(first_back_ns_, "%Y-%m-%d %H:%M:%S UTC"));
    target_.notes().push_back(back);
    end.problems.push_back(back);
  }
  for (auto& said : screen_.said(info_.label + ": ")) {
    target_.notes().push_back(said);
    end.problems.push_back(std::move(said));
  }
  const std::filesystem::path part = writer_->path();
  const std::int64_t run_id = writer_->run_id();
  target_.finish_run(*writer_, end, devices_.size());
  std::vector<DeviceDescription> devices;
  for (auto& [index, d] : devices_) devices.push_back(d);
  store::add_devices(part, run_id, devices);
  writer_.reset();
  return true;
}

}  // namespace gpuscope::ingest
