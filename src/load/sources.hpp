// The runs an analysis reads: every run of every run database named, with its clock on the
// analysis' time axis, its place among the analyzer's runs, and the GPUs whose samples the two
// passes read (app/analysis_passes).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyze/analyzer.hpp"
#include "core/device_description.hpp"
#include "load/time_axis.hpp"
#include "store/run_reader.hpp"

namespace gpuscope::load {

// The open connections to the input files, at most kOpen at a time (the least recently used is
// closed to open another): an analysis of thousands of rank files holds neither thousands of
// file descriptors nor thousands of SQLite caches. Used from one thread; a reference it gives
// stays valid until a later call asks for another file.
class ReaderCache {
 public:
  static constexpr std::size_t kOpen = 64;
  const store::RunReader& get(const std::filesystem::path& path);

 private:
  std::vector<std::unique_ptr<store::RunReader>> open_;  // most recently used last
};

// A run of one input file, with its place on the analysis' run list.
struct Source {
  std::shared_ptr<ReaderCache> readers;
  std::filesystem::path path;
  // Its file's connection, opened again when it was closed meanwhile (ReaderCache).
  const store::RunReader& reader() const { return readers->get(path); }
  std::int64_t run_id = 0;  // in its file
  std::size_t meta = 0;     // index into the analyzer's runs
  std::vector<DeviceDescription> devices;
  std::int64_t samples = 0;                                          // rows in the samples table
  std::vector<std::pair<unsigned, std::int64_t>> samples_by_device;  // (device index, rows)
  // Where each GPU of `devices` with samples is read from, planned while the file was open.
  std::vector<std::pair<unsigned, store::SamplePlan>> plans;
  RunClock clock;
  std::size_t index = 0;  // in the list of sources
};

// Every run of the inputs, and their runs' descriptions for the analyzer (in the same order).
struct AnalysisSources {
  std::vector<Source> sources;
  std::vector<analyze::RunMeta> metas;
  std::vector<std::string> input_names;
  std::int64_t samples = 0;  // in all
};

// Files [first, second) of a list.
using FileRange = std::pair<std::size_t, std::size_t>;

// Opens every run database of `paths` and lists its runs. Throws Error::usage when a run is in
// two files (or twice in one: counting it twice would double its energy), when there is no run,
// and Error when there are no samples. With `deep`, only those files' GPUs get their sample
// counts and read plans (a distributed task's share; the others' samples are never read, and
// the check for samples is left to whoever sees them all).
AnalysisSources open_sources(const std::vector<std::filesystem::path>& paths,
                             std::optional<FileRange> deep = std::nullopt);

// The analyzer's key of one GPU of a source's run.
analyze::GpuKey key_of(const Source& source, const analyze::RunMeta& meta, unsigned device_index);

// One GPU of one run: the unit of work of both passes, and where its samples are read from
// (chunks where the file has them, rows for the rest).
struct DeviceJob {
  const Source* source = nullptr;
  unsigned device = 0;
  store::SamplePlan plan;
};

// Every (run, GPU) with samples, in the order a cursor over the run visits them; nullopt when the
// devices table does not account for every sample (then both passes read sequentially).
std::optional<std::vector<DeviceJob>> device_jobs(const std::vector<Source>& sources);

}  // namespace gpuscope::load
