#include "trace/import.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <system_error>
#include <unordered_map>

#include "core/error.hpp"
#include "core/kernel_trace.hpp"
#include "core/phase.hpp"
#include "store/kernel_tables.hpp"
#include "store/phase_tables.hpp"
#include "trace/clock_map.hpp"
#include "trace/demangle.hpp"
#include "trace/device_map.hpp"
#include "trace/sidecar_reader.hpp"

namespace gpuscope::trace {
namespace {

namespace fs = std::filesystem;

// The run's kernel names: one id per distinct name across its processes.
class NameTable {
 public:
  NameTable(store::KernelTraceWriter& writer) : writer_(writer), next_(writer.next_name_id()) {}

  std::int64_t id(const std::string& name) {
    auto [it, added] = ids_.try_emplace(name, next_);
    if (added) {
      ++next_;
      const std::string demangled = demangle(name);
      writer_.add(TraceKernelName{it->second, name, demangled, short_kernel_name(demangled)});
    }
    return it->second;
  }

 private:
  store::KernelTraceWriter& writer_;
  std::int64_t next_;
  std::unordered_map<std::string, std::int64_t> ids_;
};

// Converts one file's activity records and writes them.
class FileImporter : public ActivityVisitor {
 public:
  FileImporter(store::KernelTraceWriter& writer, NameTable& names, const SidecarMeta& meta,
               const ClockMap& clock, std::int64_t process,
               const std::map<std::uint32_t, std::optional<unsigned>>& gpus)
      : writer_(writer),
        names_(names),
        meta_(meta),
        clock_(clock),
        process_(process),
        gpus_(gpus) {}

  void kernel(const KernelRecord& r) override {
    TraceKernel k;
    k.place = place(r.cuda_device, r.context_id, r.stream_id, r.correlation_id);
    k.times = times(r.start, r.end);
    k.name_id = name_id(r.name_id);
    for (int i = 0; i < 3; ++i) {
      k.grid[i] = r.grid[i];
      k.block[i] = r.block[i];
    }
    k.registers_per_thread = static_cast<std::int32_t>(r.registers_per_thread);
    k.static_shared_bytes = r.static_shared_bytes;
    k.dynamic_shared_bytes = r.dynamic_shared_bytes;
    writer_.add(k);
    ++kernels;
    if (!k.place.device_index) ++unmatched;
  }

  void memcpy(const MemcpyRecord& r) override {
    TraceMemoryOp m;
    m.place = place(r.cuda_device, r.context_id, r.stream_id, r.correlation_id);
    m.times = times(r.start, r.end);
    m.copy_kind = r.copy_kind;
    m.src_kind = r.src_kind;
    m.dst_kind = r.dst_kind;
    m.bytes = static_cast<std::int64_t>(r.bytes);
    add(m);
  }

  void memset(const MemsetRecord& r) override {
    TraceMemoryOp m;
    m.place = place(r.cuda_device, r.context_id, r.stream_id, r.correlation_id);
    m.times = times(r.start, r.end);
    m.memset = true;
    m.dst_kind = r.memory_kind;
    m.bytes = static_cast<std::int64_t>(r.bytes);
    m.value = r.value;
    add(m);
  }

  // An NVTX range's start or end, or an instant: ranges pair up by CUPTI's id.
  void marker(const MarkerRecord& r) override {
    const std::int64_t mono = clock_.to_mono(r.timestamp);
    last_mono_ = std::max(last_mono_, mono);
    if ((r.flags & kMarkerEnd) != 0) {
      const auto it = open_.find(r.id);
      if (it == open_.end()) {
        ++unmatched_ends;
        return;
      }
      Phase p = std::move(it->second);
      open_.erase(it);
      p.end_mono_ns = std::max(mono, p.start_mono_ns);
      phases.push_back(std::move(p));
      return;
    }
    Phase p;
    p.source = PhaseSource::Nvtx;
    const auto name = meta_.marker_names.find(r.name_id);
    p.name = name != meta_.marker_names.end() && !name->second.empty() ? name->second
                                                                       : "<unnamed NVTX range>";
    const auto domain = meta_.marker_names.find(r.domain_id);
    if (r.domain_id != 0 && domain != meta_.marker_names.end()) p.domain = domain->second;
    const auto data = meta_.marker_data.find(r.id);
    if (data != meta_.marker_data.end() && data->second.category != 0) {
      p.category = data->second.category;
    }
    p.pid = r.process_id != 0 ? std::int64_t{r.process_id} : meta_.process->pid;
    if (r.thread_id != 0) p.tid = r.thread_id;
    p.start_mono_ns = mono;
    p.end_mono_ns = mono;
    p.device_index = own_gpu();
    if ((r.flags & kMarkerInstant) != 0) {
      p.point = true;
      phases.push_back(std::move(p));
      return;
    }
    auto [it, added] = open_.try_emplace(r.id, std::move(p));
    if (!added) ++unmatched_ends;  // an id reused while open: the first start is kept
  }

  // What is still open: it ended with its process (or the job), never closed.
  void close_open(std::int64_t end_mono_ns) {
    for (auto& [id, p] : open_) {
      p.end_mono_ns = std::max(end_mono_ns > 0 ? end_mono_ns : last_mono_, p.start_mono_ns);
      p.closed = false;
      phases.push_back(std::move(p));
      ++unclosed;
    }
    open_.clear();
  }

  std::int64_t kernels = 0;
  std::int64_t memory_ops = 0;
  std::int64_t unmatched = 0;
  std::int64_t unnamed = 0;  // kernels whose name record was missing
  std::vector<Phase> phases;
  std::int64_t unmatched_ends = 0;
  std::int64_t unclosed = 0;

 private:
  void add(const TraceMemoryOp& m) {
    writer_.add(m);
    ++memory_ops;
    if (!m.place.device_index) ++unmatched;
  }

  TracePlace place(std::uint32_t device, std::uint32_t context, std::uint32_t stream,
                   std::uint32_t correlation) const {
    TracePlace p;
    const auto gpu = gpus_.find(device);
    if (gpu != gpus_.end()) p.device_index = gpu->second;
    p.process = process_;
    p.cuda_device = device;
    p.context_id = context;
    p.stream_id = stream;
    p.correlation_id = correlation;
    return p;
  }

  TraceTimes times(std::uint64_t start, std::uint64_t end) const {
    return {clock_.to_mono(start), clock_.to_mono(end), clock_.to_wall(start), clock_.to_wall(end)};
  }

  // The one sampled GPU this process used, when it used exactly one: its ranges are that GPU's.
  std::optional<unsigned> own_gpu() const {
    std::optional<unsigned> found;
    for (const auto& [cuda, gpu] : gpus_) {
      if (!gpu) continue;
      if (found && *found != *gpu) return std::nullopt;
      found = gpu;
    }
    return found;
  }

  std::int64_t name_id(std::uint32_t local) {
    auto cached = local_ids_.find(local);
    if (cached != local_ids_.end()) return cached->second;
    const auto name = meta_.names.find(local);
    if (name == meta_.names.end()) ++unnamed;
    const std::int64_t id =
        names_.id(name != meta_.names.end() ? name->second
                                            : fmt::format("<kernel name {} not recorded>", local));
    local_ids_.emplace(local, id);
    return id;
  }

  store::KernelTraceWriter& writer_;
  NameTable& names_;
  const SidecarMeta& meta_;
  const ClockMap& clock_;
  std::int64_t process_;
  const std::map<std::uint32_t, std::optional<unsigned>>& gpus_;
  std::unordered_map<std::uint32_t, std::int64_t> local_ids_;
  std::map<std::uint32_t, Phase> open_;
  std::int64_t last_mono_ = 0;
};

std::string describe_process(const SidecarMeta& meta) {
  if (!meta.process) return meta.file.filename().string();
  std::string command = meta.command.empty() ? meta.file.filename().string() : meta.command;
  if (command.size() > 60) command = command.substr(0, 57) + "...";
  return fmt::format("process {} ({})", meta.process->pid, command);
}

// A sidecar file's header records, or none when the file cannot be imported (why is added to
// `problems`).
std::optional<SidecarMeta> read_importable_meta(const fs::path& file,
                                                std::vector<std::string>& problems) {
  SidecarMeta meta;
  try {
    meta = read_sidecar_meta(file);
  } catch (const Error& e) {
    problems.push_back(fmt::format("kernel trace file skipped: {}", e.what()));
    return std::nullopt;
  }
  if (!meta.process) {
    problems.push_back(fmt::format(
        "kernel trace file {} skipped: it has no process record (written by something else, "
        "or cut short at its start)",
        file.filename().string()));
    return std::nullopt;
  }
  return meta;
}

// A traced process's CUDA devices against the sampled GPUs.
struct DeviceMatch {
  std::map<std::uint32_t, std::optional<unsigned>> gpus;  // CUDA device → sampled GPU, if any
  std::vector<std::string> unsampled;                     // the devices gpuscope did not sample
};

// Writes trace process `process`'s CUDA devices, each matched to a sampled GPU by UUID or PCI
// address, and returns the match.
DeviceMatch add_devices(store::KernelTraceWriter& writer, const SidecarMeta& meta,
                        std::int64_t process, const std::vector<DeviceDescription>& devices) {
  DeviceMatch match;
  for (const auto& [cuda_device, d] : meta.devices) {
    TraceDevice device;
    device.process = process;
    device.cuda_device = cuda_device;
    device.device_index = match_device(d, devices);
    if (d.uuid) device.uuid = format_gpu_uuid(*d.uuid);
    if (d.pci) device.pci_bus_id = format_pci_bus_id(*d.pci);
    device.name = d.name;
    match.gpus[cuda_device] = device.device_index;
    if (!device.device_index) {
      match.unsampled.push_back(fmt::format("CUDA device {} ({})", cuda_device,
                                            device.uuid.value_or(device.pci_bus_id.value_or("?"))));
    }
    writer.add(device);
  }
  return match;
}

// What went wrong in a traced process, in sentences: what its file says, what was lost, and
// what the import could not pair up, name or place on a sampled GPU.
std::vector<std::string> process_problems(const SidecarMeta& meta, const ClockMap& clock,
                                          const FileImporter& importer,
                                          const std::vector<std::string>& unsampled) {
  std::vector<std::string> problems;
  for (const std::string& note : meta.notes) problems.push_back(note);
  if (meta.truncated) {
    problems.push_back(
        "the trace file ends inside a record: the process died while writing "
        "it, and what it still held was lost");
  } else if (!meta.ended) {
    problems.push_back(
        "the process did not end normally (a signal, a crash, or _exit): the activity CUPTI "
        "still held in its buffers (up to about a second's worth) was lost");
  }
  if (meta.dropped > 0) {
    problems.push_back(
        fmt::format("CUPTI dropped {} activity records (its buffers were full)", meta.dropped));
  }
  if (meta.unknown_records) {
    problems.push_back("records of a newer trace library were skipped");
  }
  if (clock.uncalibrated()) {
    problems.push_back("no clock calibration: CUPTI's clock was taken as CLOCK_REALTIME");
  }
  if (importer.unmatched_ends > 0) {
    problems.push_back(fmt::format("{} NVTX range ends had no start (or reused an open id)",
                                   importer.unmatched_ends));
  }
  if (importer.unclosed > 0) {
    problems.push_back(fmt::format(
        "{} NVTX ranges were still open when the process {} (closed = 0 in the phases table)",
        importer.unclosed, meta.ended ? "ended" : "died"));
  }
  if (importer.unnamed > 0) {
    problems.push_back(fmt::format("{} kernels had no name record", importer.unnamed));
  }
  if (!unsampled.empty() && importer.unmatched > 0) {
    problems.push_back(
        fmt::format("{} kernels and memory operations ran on GPUs gpuscope did not sample: {}",
                    importer.unmatched, fmt::join(unsampled, ", ")));
  }
  return problems;
}

// The trace process record of an imported file: who it was, what it held and its problems.
TraceProcess process_record(const SidecarMeta& meta, const ClockMap& clock, std::int64_t process,
                            const FileImporter& importer,
                            const std::vector<std::string>& unsampled) {
  TraceProcess p;
  p.process = process;
  p.pid = meta.process->pid;
  p.host = meta.process->host;
  p.command = meta.command;
  p.cupti_version = meta.process->cupti_version;
  p.clock = clock.clock_name();
  p.calibrations = static_cast<std::int64_t>(meta.calibrations.size());
  p.kernels = importer.kernels;
  p.memory_ops = importer.memory_ops;
  p.dropped_records = static_cast<std::int64_t>(meta.dropped);
  p.complete = meta.ended && !meta.truncated;
  p.problems = process_problems(meta, clock, importer, unsampled);
  return p;
}

// Imports one sidecar file (whose header is `meta`) as a trace process: its devices, its
// activity and its process record; adds its figures and problems to `summary` and its NVTX
// ranges to `phases`.
void import_file(const fs::path& file, const SidecarMeta& meta, store::KernelTraceWriter& writer,
                 NameTable& names, const std::vector<DeviceDescription>& devices,
                 const ImportOptions& options, ImportSummary& summary, std::vector<Phase>& phases) {
  const auto source = static_cast<TimestampSource>(meta.process->timestamp_source);
  const ClockMap clock(meta.calibrations, source, options.wall_minus_mono_ns);
  const std::int64_t process = writer.next_process();
  const DeviceMatch match = add_devices(writer, meta, process, devices);

  FileImporter importer(writer, names, meta, clock, process, match.gpus);
  for_each_activity(file, importer);
  importer.close_open(meta.ended ? meta.end_mono_ns : options.run_end_mono_ns);

  const TraceProcess p = process_record(meta, clock, process, importer, match.unsampled);
  writer.add(p);
  const std::string who = describe_process(meta);
  for (const std::string& problem : p.problems) {
    summary.problems.push_back(fmt::format("kernel trace of {}: {}", who, problem));
  }
  ++summary.files;
  summary.kernels += importer.kernels;
  summary.memory_ops += importer.memory_ops;
  summary.unmatched += importer.unmatched;
  summary.phases += static_cast<std::int64_t>(importer.phases.size());
  std::move(importer.phases.begin(), importer.phases.end(), std::back_inserter(phases));
}

// The NVTX ranges, into the phases table (docs/phases.md), in start order.
void store_phases(const fs::path& database, std::int64_t run_id, std::vector<Phase>& phases) {
  if (phases.empty()) return;
  std::stable_sort(phases.begin(), phases.end(), [](const Phase& a, const Phase& b) {
    return a.start_mono_ns < b.start_mono_ns;
  });
  store::append_phases(database, run_id, phases);
}

// Deletes the imported files, then `dir` if that left it empty; what cannot be deleted stays.
void remove_imported(const fs::path& dir, const std::vector<fs::path>& imported) {
  std::error_code ec;
  for (const fs::path& file : imported) fs::remove(file, ec);
  fs::remove(dir, ec);  // only when empty
}

}  // namespace

ImportSummary import_trace_dir(const fs::path& dir, const fs::path& database, std::int64_t run_id,
                               const std::vector<DeviceDescription>& devices,
                               const ImportOptions& options) {
  ImportSummary summary;
  const std::vector<fs::path> files = sidecar_files(dir);
  if (files.empty()) {
    summary.problems.push_back(fmt::format(
        "--trace-kernels: no CUDA process of the job was traced (nothing in {}); CUDA loads the "
        "tracing library only into processes that initialise the CUDA driver",
        dir.string()));
  }
  auto writer = store::KernelTraceWriter::open(database, run_id);
  NameTable names(*writer);
  std::vector<fs::path> imported;
  std::vector<Phase> phases;
  for (const fs::path& file : files) {
    const std::optional<SidecarMeta> meta = read_importable_meta(file, summary.problems);
    if (!meta) continue;
    import_file(file, *meta, *writer, names, devices, options, summary, phases);
    imported.push_back(file);
  }
  writer->add_run_problems(summary.problems);
  writer->commit();
  store_phases(database, run_id, phases);
  if (options.remove_imported) remove_imported(dir, imported);
  return summary;
}

}  // namespace gpuscope::trace
