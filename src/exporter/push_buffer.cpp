#include "exporter/push_buffer.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <system_error>

#include "util/temporary_folder.hpp"

namespace gpuscope::exporter {

namespace fs = std::filesystem;

PushBuffer::PushBuffer(PushBufferOptions options, std::function<void(const std::string&)> warn)
    : options_(std::move(options)), warn_(std::move(warn)) {}

PushBuffer::~PushBuffer() {
  std::error_code ec;
  for (const Batch& batch : queue_) {
    if (!batch.file.empty()) fs::remove(batch.file, ec);
  }
  if (spill_dir_created_) fs::remove(options_.spill_dir, ec);  // only if empty
  // spill_folder_, when it is ours, goes with what is in it unless it holds undelivered samples.
}

bool PushBuffer::ensure_spill_dir() {
  if (spill_folder_ || spill_dir_created_ ||
      (!options_.spill_dir.empty() && fs::is_directory(options_.spill_dir))) {
    return true;
  }
  if (spill_failed_) return false;
  if (options_.spill_dir.empty()) {
    try {
      spill_folder_ = std::make_unique<util::TemporaryFolder>("gpuscope-push-");
    } catch (const std::system_error& e) {
      warn_(
          fmt::format("cannot create a spill directory ({}); samples beyond {} MiB of buffer "
                      "will be dropped while the server is away",
                      e.what(), options_.memory_limit_bytes >> 20));
      spill_failed_ = true;
      return false;
    }
    options_.spill_dir = spill_folder_->path();
    return true;
  }
  std::error_code ec;
  if (!fs::create_directories(options_.spill_dir, ec) && ec) {
    warn_(
        fmt::format("cannot create the spill directory {} ({}); samples beyond {} MiB of "
                    "buffer will be dropped while the server is away",
                    options_.spill_dir.string(), ec.message(), options_.memory_limit_bytes >> 20));
    spill_failed_ = true;
    return false;
  }
  spill_dir_created_ = true;
  return true;
}

bool PushBuffer::spill(Batch& batch) {
  if (!ensure_spill_dir()) return false;
  if (stats_.disk_bytes + batch.bytes > options_.disk_limit_bytes) return false;
  const fs::path file = options_.spill_dir / fmt::format("batch-{:012}.prom", next_file_++);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(batch.body.data(), static_cast<std::streamsize>(batch.body.size()));
  out.close();
  if (!out) {
    std::error_code ec;
    fs::remove(file, ec);
    if (!spill_failed_) {
      warn_(
          fmt::format("cannot write to the spill directory {}; older samples will be dropped "
                      "while the server is away",
                      options_.spill_dir.string()));
    }
    spill_failed_ = true;
    return false;
  }
  stats_.memory_bytes -= batch.body.size();
  stats_.disk_bytes += batch.bytes;
  ++stats_.spilled_batches;
  batch.file = file;
  std::string().swap(batch.body);
  return true;
}

void PushBuffer::drop_front() {
  Batch& batch = queue_.front();
  if (!batch.file.empty()) {
    std::error_code ec;
    fs::remove(batch.file, ec);
    stats_.disk_bytes -= batch.bytes;
    --first_in_memory_;
  } else {
    stats_.memory_bytes -= batch.body.size();
  }
  stats_.lines -= batch.lines;
  --stats_.batches;
  queue_.pop_front();
}

void PushBuffer::enforce_limits() {
  while (stats_.memory_bytes > options_.memory_limit_bytes && first_in_memory_ < queue_.size()) {
    if (spill(queue_[first_in_memory_])) {
      ++first_in_memory_;
      continue;
    }
    // No room on disk (or no disk): the oldest samples go, and the user hears of it once.
    const std::uint64_t lines = queue_.front().lines;
    drop_front();
    stats_.dropped_lines += lines;
    if (!warned_drop_) {
      warn_(
          fmt::format("the push buffer is full ({} MiB in memory, {} MiB on disk); dropping the "
                      "oldest samples until the server takes them again",
                      options_.memory_limit_bytes >> 20, options_.disk_limit_bytes >> 20));
      warned_drop_ = true;
    }
  }
}

void PushBuffer::add(std::string body, std::uint64_t lines) {
  if (body.empty()) return;
  Batch batch;
  batch.bytes = body.size();
  batch.lines = lines;
  stats_.memory_bytes += body.size();
  stats_.lines += lines;
  ++stats_.batches;
  batch.body = std::move(body);
  queue_.push_back(std::move(batch));
  enforce_limits();
}

std::optional<std::string> PushBuffer::front() {
  while (!queue_.empty()) {
    const Batch& batch = queue_.front();
    if (batch.file.empty()) return batch.body;
    std::ifstream in(batch.file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (in && text.str().size() == batch.bytes) return std::move(text).str();
    warn_(fmt::format("cannot read back the spilled batch {}; its {} samples are lost",
                      batch.file.string(), batch.lines));
    stats_.dropped_lines += batch.lines;
    drop_front();
  }
  return std::nullopt;
}

std::optional<fs::path> PushBuffer::save_remaining(std::string_view stamp) {
  if (queue_.empty() || !ensure_spill_dir()) return std::nullopt;
  const fs::path file = options_.spill_dir / fmt::format("undelivered-{}.prom", stamp);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  for (std::size_t i = 0; out && i < queue_.size(); ++i) {
    const Batch& batch = queue_[i];
    if (batch.file.empty()) {
      out.write(batch.body.data(), static_cast<std::streamsize>(batch.body.size()));
    } else {
      std::ifstream in(batch.file, std::ios::binary);
      out << in.rdbuf();
    }
  }
  out.close();
  if (!out) {
    std::error_code ec;
    fs::remove(file, ec);
    warn_(fmt::format("cannot write the undelivered samples to {}", file.string()));
    return std::nullopt;
  }
  while (!queue_.empty()) drop_front();
  if (spill_folder_) spill_folder_->keep();  // the saved samples are the user's now
  return file;
}

void PushBuffer::pop() {
  if (queue_.empty()) return;
  drop_front();
  warned_drop_ = false;  // a new outage deserves a new warning
}

}  // namespace gpuscope::exporter
