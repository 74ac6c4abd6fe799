// A sidecar file of one traced process, written as libgpuscope_cupti.so writes one (no CUPTI
// needed): kernels named "_Z6kernelv" on the GPU with the given NVML UUID, on CLOCK_MONOTONIC.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/clock.hpp"
#include "support/process.hpp"
#include "trace/sidecar_writer.hpp"

namespace gpuscope::testing {

// The NVML UUID of simulated GPU `gpu` of the h100x4-straggler scenario the trace tests profile.
inline std::string uuid_of(unsigned gpu) {
  const ProcessResult r = run_gpuscope({"devices", "--simulate", "h100x4-straggler", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out)["devices"][gpu]["uuid"];
}

// `count` kernels of 250 ns, 1 µs apart from now on, on stream 7 (and every third on stream 9),
// a 4 KiB memcpy and a memset.
inline void write_sidecar(const std::string& trace_dir, const std::string& uuid, int count = 2,
                          std::int64_t pid = 77) {
  using namespace gpuscope::trace;
  std::filesystem::create_directories(trace_dir);
  SidecarFile file;
  ASSERT_TRUE(file.open(trace_dir, "h", pid)) << file.error();
  SidecarBatch b;
  ProcessRecord p{};
  p.pid = pid;
  p.timestamp_source = static_cast<std::uint32_t>(TimestampSource::Monotonic);
  b.add(RecordType::Process, p);
  DeviceRecord d{};
  d.flags = kDeviceHasUuid;
  std::string hex;
  for (char c : uuid.substr(4)) {
    if (c != '-') hex += c;
  }
  for (std::size_t i = 0; i < 16; ++i) {
    d.uuid[i] = static_cast<std::uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  }
  b.add(RecordType::Device, d);
  b.add(RecordType::Name, NameRecord{1, 0}, "_Z6kernelv");
  const auto now = static_cast<std::uint64_t>(mono_now_ns());
  for (int i = 0; i < count; ++i) {
    KernelRecord k{};
    k.start = now + static_cast<std::uint64_t>(i) * 1000;
    k.end = k.start + 250;
    k.name_id = 1;
    k.stream_id = i % 3 == 2 ? 9 : 7;
    k.grid[0] = 4;
    k.block[0] = 32;
    b.add(RecordType::Kernel, k);
  }
  MemcpyRecord m{};
  m.start = now + 500'000;
  m.end = m.start + 2000;
  m.bytes = 4096;
  m.copy_kind = 2;
  m.stream_id = 7;
  b.add(RecordType::Memcpy, m);
  MemsetRecord s{};
  s.start = now + 600'000;
  s.end = s.start + 100;
  s.bytes = 64;
  s.stream_id = 7;
  b.add(RecordType::Memset, s);
  b.add(RecordType::End, EndRecord{mono_now_ns()});
  ASSERT_TRUE(file.append(b));
}

}  // namespace gpuscope::testing
