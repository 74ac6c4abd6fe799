#include "ingest/run_target.hpp"

#include <fmt/format.h>

#include <chrono>

#include "core/error.hpp"
#include "store/merge.hpp"
#include "util/temporary_folder.hpp"

namespace gpuscope::ingest {

RunTarget::RunTarget(std::filesystem::path output, bool overwrite)
    : output_(std::move(output)), overwrite_(overwrite) {}

RunTarget::~RunTarget() = default;

std::unique_ptr<store::RunWriter> RunTarget::add_run(
    const RunInfo& info, const std::vector<DeviceDescription>& devices) {
  if (!parts_dir_) {
    try {
      parts_dir_ = std::make_unique<util::TemporaryFolder>("gpuscope-import-");
    } catch (const std::system_error& e) {
      throw Error("cannot make a folder for the import", e.what(),
                  "set TMPDIR to a writable folder with room for the imported data");
    }
  }
  const std::filesystem::path part = parts_dir_->path() / fmt::format("{:06}.db", parts_.size());
  store::WriterOptions options;
  options.flush_interval = std::chrono::milliseconds(60'000);
  options.scratch = true;  // the part lives in the private folder until it is merged
  auto writer = store::RunWriter::create(part, true, info, devices, options);
  parts_.push_back(part);
  return writer;
}

void RunTarget::finish_run(store::RunWriter& writer, const RunEnd& end, std::size_t gpus) {
  const auto problems = writer.finish(end);
  summary_.notes.insert(summary_.notes.end(), problems.begin(), problems.end());
  summary_.samples += end.samples_taken;
  summary_.gpus += gpus;
}

ImportSummary RunTarget::finish() {
  if (parts_.empty()) {
    throw Error::usage("the input holds no run with samples", {}, "check the folder or file given");
  }
  summary_.runs = static_cast<std::size_t>(store::merge_parts(output_, parts_, overwrite_).runs);
  parts_dir_.reset();
  return summary_;
}

}  // namespace gpuscope::ingest
