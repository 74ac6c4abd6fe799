// Writes the seed inputs of the fuzz targets that need binary files made by code: CUPTI trace
// sidecar files (as libgpuscope_cupti.so writes them) and Nsight Systems exports (the tests'
// fixture, both schema variants). Usage: make_seeds SIDECAR_DIR NSYS_DIR.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "kernels/nsys_fixture.hpp"
#include "trace/sidecar_writer.hpp"

namespace {

using namespace gpuscope::trace;

// One process with a device, a name, `kernels` kernels, a memcpy, a memset and, when `ended`,
// its end record (a process that died has none).
bool write_sidecar(const std::string& dir, long pid, int kernels, bool ended) {
  SidecarFile file;
  if (!file.open(dir, "seed", pid)) return false;
  SidecarBatch b;
  ProcessRecord p{};
  p.pid = static_cast<decltype(p.pid)>(pid);
  p.timestamp_source = static_cast<std::uint32_t>(TimestampSource::Monotonic);
  b.add(RecordType::Process, p);
  DeviceRecord d{};
  d.flags = kDeviceHasUuid;
  for (std::uint8_t i = 0; i < 16; ++i) d.uuid[i] = static_cast<std::uint8_t>(i * 17);
  b.add(RecordType::Device, d);
  b.add(RecordType::Name, NameRecord{1, 0}, "_Z6kernelv");
  b.add(RecordType::Name, NameRecord{2, 0}, "_ZN5torch4gemmIfEEvPKfS2_");
  b.note("seed note");
  for (int i = 0; i < kernels; ++i) {
    KernelRecord k{};
    k.start = 1'000'000 + static_cast<std::uint64_t>(i) * 1000;
    k.end = k.start + 250;
    k.name_id = 1 + static_cast<std::uint32_t>(i % 2);
    k.stream_id = 7;
    k.grid[0] = 4;
    k.block[0] = 32;
    b.add(RecordType::Kernel, k);
  }
  MemcpyRecord m{};
  m.start = 2'000'000;
  m.end = m.start + 2000;
  m.bytes = 4096;
  m.copy_kind = 2;
  b.add(RecordType::Memcpy, m);
  MemsetRecord s{};
  s.start = 3'000'000;
  s.end = s.start + 100;
  s.bytes = 64;
  b.add(RecordType::Memset, s);
  if (ended) b.add(RecordType::End, EndRecord{4'000'000});
  return file.append(b);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_seeds SIDECAR_DIR NSYS_DIR\n");
    return 2;
  }
  const std::string sidecars = argv[1];
  const std::string nsys = argv[2];
  std::filesystem::create_directories(sidecars);
  std::filesystem::create_directories(nsys);
  if (!write_sidecar(sidecars, 1, 3, true) || !write_sidecar(sidecars, 2, 1, false)) {
    std::fprintf(stderr, "make_seeds: cannot write sidecar seeds in %s\n", sidecars.c_str());
    return 1;
  }
  gpuscope::testing::write_nsys_export(nsys + "/current.sqlite",
                                       gpuscope::testing::NsysSchema::Current);
  gpuscope::testing::write_nsys_export(nsys + "/legacy.sqlite",
                                       gpuscope::testing::NsysSchema::Legacy);
  return 0;
}
