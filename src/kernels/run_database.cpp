#include "kernels/run_database.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <map>

#include "store/kernel_tables.hpp"
#include "store/run_reader.hpp"
#include "store/schema.hpp"

namespace gpuscope::kernels {
namespace fs = std::filesystem;

bool is_run_database(const fs::path& file) {
  // Opening a FIFO would wait for its writer; such a path is no run database (the nsys reader
  // then says what it is).
  std::error_code error;
  if (!fs::is_regular_file(file, error)) return false;
  // The SQLite header: "SQLite format 3\0", and the application_id, big-endian, at byte 68.
  std::ifstream in(file, std::ios::binary);
  std::array<char, 72> header{};
  if (!in.read(header.data(), header.size())) return false;
  if (std::string_view(header.data(), 16) != std::string_view("SQLite format 3\0", 16)) {
    return false;
  }
  const auto byte = [&](std::size_t i) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(header[i]));
  };
  const std::uint32_t id = (byte(68) << 24U) | (byte(69) << 16U) | (byte(70) << 8U) | byte(71);
  return id == static_cast<std::uint32_t>(store::kApplicationId);
}

std::vector<KernelReport> read_run_database(const fs::path& file, NameColumn names) {
  const store::RunReader runs = store::RunReader::open(file);
  const store::KernelTraceReader trace = store::KernelTraceReader::open(file);
  const std::vector<store::StoredRun> stored = runs.runs();
  std::vector<KernelReport> out;
  for (const store::StoredRun& run : stored) {
    KernelReport report;
    report.file = file;
    if (stored.size() > 1) {
      std::string who = run.info.host;
      if (run.info.ranks.rank) who += fmt::format(" rank {}", *run.info.ranks.rank);
      report.file = fmt::format("{} ({})", file.string(), who.empty() ? "run" : who);
      if (who.empty()) report.file = fmt::format("{} (run {})", file.string(), run.run_id);
    }
    const std::string label = report.file.string();
    if (!trace.has_trace_tables() || trace.processes(run.run_id).empty()) {
      report.notes.push_back(fmt::format(
          "{}: no kernel trace (the run was profiled without --trace-kernels, or no process of "
          "its job used CUDA)",
          label));
      out.push_back(std::move(report));
      continue;
    }
    report.has_kernel_table = true;
    std::map<std::int64_t, std::string> name_of;
    for (const TraceKernelName& n : trace.names(run.run_id)) {
      name_of[n.name_id] = names == NameColumn::ShortName ? n.short_name : n.demangled;
    }
    std::map<std::int64_t, std::vector<std::int64_t>> by_id;
    trace.for_each_kernel(run.run_id, store::TraceOrder::ByStart, [&](const TraceKernel& k) {
      by_id[k.name_id].push_back(std::max<std::int64_t>(0, k.times.duration_ns()));
    });
    for (auto& [id, durations] : by_id) {
      const auto name = name_of.find(id);
      auto& target =
          report
              .kernels[name != name_of.end() ? name->second : fmt::format("<kernel name {}>", id)];
      target.insert(target.end(), durations.begin(), durations.end());
    }
    if (report.kernels.empty()) {
      report.notes.push_back(fmt::format("{}: no kernels recorded", label));
    }
    trace.for_each_memory_op(run.run_id, store::TraceOrder::ByStart, [&](const TraceMemoryOp& m) {
      const std::string operation = m.memset ? "[CUDA memset]" : memcpy_operation(m.copy_kind);
      report.memory[operation].push_back(
          {std::max<std::int64_t>(0, m.times.duration_ns()), std::max<std::int64_t>(0, m.bytes)});
    });
    for (const TraceProcess& p : trace.processes(run.run_id)) {
      for (const std::string& problem : p.problems) {
        report.notes.push_back(fmt::format("{}: process {}: {}", label, p.pid, problem));
      }
    }
    out.push_back(std::move(report));
  }
  return out;
}

}  // namespace gpuscope::kernels
