// A stand-in for a CUDA job under `gpuscope profile --trace-kernels`, for the black-box tests
// (no GPU needed). It prints the tracing environment gpuscope gave it, loads the injection
// library from CUDA_INJECTION64_PATH and calls InitializeInjection as the CUDA driver would
// (without a driver CUPTI refuses to enable activities, which the library records), then plays a
// traced CUDA process: CUPTI buffers built by hand go through the library's record processing
// into a sidecar file of its own, with kernels on the GPU whose UUID is given, timed on
// CLOCK_MONOTONIC now. --fork N does the same in N child processes, as torchrun's workers would.
// With --nvtx N it also plays N training steps of NVTX ranges (push/pop "step" holding "forward"
// of category 2 and "backward", an instant "saved" after each step, and a "tail" range never
// popped), as CUPTI's MARKER records; GPUSCOPE_TRACE_KINDS decides what it writes, as it decides
// what the library enables.
// Usage: fake_cuda_job --uuid GPU-...[,GPU-...] [--fork N] [--kernels K] [--spacing-us S] [--nvtx
// N] (process i of the job, the forked ones first, runs on the i-th UUID of the list, cyclically;
// its kernels start every S µs: gemm for 0.4 S, relu for 0.1 S)
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "trace/cupti/activity_records.hpp"
#include "trace/cupti_buffers.hpp"
#include "trace/sidecar_writer.hpp"

namespace {

using namespace gpuscope::trace;

bool parse_uuid(const std::string& text, std::uint8_t (&out)[16]) {
  std::string hex;
  for (char c : text.substr(text.rfind("GPU-", 0) == 0 ? 4 : 0)) {
    if (c != '-') hex += c;
  }
  if (hex.size() != 32) return false;
  for (std::size_t i = 0; i < 16; ++i) {
    out[i] = static_cast<std::uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  }
  return true;
}

// One traced process's sidecar file, as the library writes it.
int play_traced_process(const std::uint8_t (&uuid)[16], int kernels, std::uint64_t spacing_ns,
                        int steps) {
  const char* kinds_text = std::getenv(kTraceKindsVariable);
  const std::string kinds = kinds_text != nullptr ? kinds_text : "kernels";
  if (kinds.find("kernels") == std::string::npos) kernels = 0;
  if (kinds.find("nvtx") == std::string::npos) steps = 0;
  const char* dir = std::getenv(kTraceDirVariable);
  if (dir == nullptr) {
    std::fprintf(stderr, "fake_cuda_job: %s is not set\n", kTraceDirVariable);
    return 3;
  }
  SidecarFile file;
  if (!file.open(dir, "fakehost", getpid())) {
    std::fprintf(stderr, "fake_cuda_job: %s\n", file.error().c_str());
    return 3;
  }
  SidecarBatch batch;
  ProcessRecord process{};
  process.pid = getpid();
  process.parent_pid = getppid();
  process.cupti_version = CUPTI_API_VERSION;
  process.timestamp_source = static_cast<std::uint32_t>(TimestampSource::Monotonic);
  std::strcpy(process.host, "fakehost");
  batch.add(RecordType::Process, process, std::string_view("fake_cuda_job\0worker\0", 21));
  const std::int64_t now = gpuscope::mono_now_ns();
  batch.add(RecordType::Calibration,
            CalibrationRecord{static_cast<std::uint64_t>(now), now, gpuscope::wall_now_ns(), 0, 0});

  testing::CuptiBuffer buffer(static_cast<std::size_t>(kernels) * sizeof(cupti::KernelActivity) +
                              (1 << 16));
  testing::add_device(buffer, 0, uuid, "Fake H100");
  const auto t0 = static_cast<std::uint64_t>(now);
  for (int i = 0; i < kernels; ++i) {
    const std::uint64_t start = t0 + spacing_ns * static_cast<std::uint64_t>(i);
    // gemm 0.4 spacing, relu 0.1 spacing, alternating.
    testing::add_kernel(buffer, i % 2 == 0 ? "_Z4gemmIfEviPKT_" : "_Z11relu_kernelPf", start,
                        start + (i % 2 == 0 ? spacing_ns * 2 / 5 : spacing_ns / 10), 0, 7);
  }
  if (kernels > 0) {
    testing::add_memcpy(buffer, t0 + 500'000, t0 + 520'000, 1 << 20,
                        CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 0);
  }
  // NVTX: each step takes spacing_ns: forward 40 %, backward 50 %, then the instant.
  const auto pid = static_cast<std::uint32_t>(getpid());
  std::uint32_t id = 0;
  for (int i = 0; i < steps; ++i) {
    const std::uint64_t at = t0 + spacing_ns * static_cast<std::uint64_t>(i);
    const std::uint32_t step = ++id, forward = ++id, backward = ++id, saved = ++id;
    testing::add_marker(buffer, CUPTI_ACTIVITY_FLAG_MARKER_START, step, at, "step", nullptr, pid,
                        pid);
    testing::add_marker(buffer, CUPTI_ACTIVITY_FLAG_MARKER_START, forward, at + 1, "forward",
                        nullptr, pid, pid);
    testing::add_marker_data(buffer, forward, 2, 0xff0000ff);
    testing::add_marker(buffer, CUPTI_ACTIVITY_FLAG_MARKER_END, forward, at + spacing_ns * 2 / 5,
                        nullptr, nullptr, pid, pid);
    testing::add_marker(buffer, CUPTI_ACTIVITY_FLAG_MARKER_START, backward,
                        at + spacing_ns * 2 / 5 + 1, "backward", nullptr, pid, pid);
    testing::add_marker(buffer, CUPTI_ACTIVITY_FLAG_MARKER_END, backward, at + spacing_ns * 9 / 10,
                        nullptr, nullptr, pid, pid);
    testing::add_marker(buffer, CUPTI_ACTIVITY_FLAG_MARKER_END, step, at + spacing_ns * 19 / 20,
                        nullptr, nullptr, pid, pid);
    testing::add_marker(buffer, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, saved,
                        at + spacing_ns * 19 / 20 + 1, "saved", nullptr, pid, pid);
  }
  if (steps > 0) {
    testing::add_marker(buffer, CUPTI_ACTIVITY_FLAG_MARKER_START, ++id,
                        t0 + spacing_ns * static_cast<std::uint64_t>(steps), "tail", "myapp", pid,
                        pid);
  }
  cupti::ActivityProcessor processor;
  processor.process_buffer(buffer.data(), buffer.used(), batch);
  // The "GPU work" ends in the future: live until it has, as a real process would.
  const std::int64_t last_end =
      now + static_cast<std::int64_t>(spacing_ns) * std::max(kernels, steps + 1);
  while (gpuscope::mono_now_ns() < last_end) usleep(200);
  batch.add(RecordType::End, EndRecord{gpuscope::mono_now_ns()});
  return file.append(batch) ? 0 : 3;
}

// NVTX's export-table getter, offering none.
extern "C" const void* no_export_table(std::uint32_t /*table_id*/) {
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  std::string uuid_text;
  int forks = 0;
  int kernels = 3;
  int steps = 0;
  std::uint64_t spacing_ns = 1'000'000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--uuid") uuid_text = argv[i + 1];
    if (option == "--fork") forks = std::atoi(argv[i + 1]);
    if (option == "--kernels") kernels = std::atoi(argv[i + 1]);
    if (option == "--spacing-us") spacing_ns = 1000 * std::strtoull(argv[i + 1], nullptr, 10);
    if (option == "--nvtx") steps = std::atoi(argv[i + 1]);
  }
  std::vector<std::array<std::uint8_t, 16>> uuids;
  for (std::size_t from = 0; from < uuid_text.size();) {
    const std::size_t comma = std::min(uuid_text.find(',', from), uuid_text.size());
    std::uint8_t uuid[16] = {};
    if (!parse_uuid(uuid_text.substr(from, comma - from), uuid)) break;
    uuids.emplace_back();
    std::memcpy(uuids.back().data(), uuid, 16);
    from = comma + 1;
  }
  if (uuids.empty()) {
    std::fprintf(stderr, "fake_cuda_job: --uuid GPU-... is required\n");
    return 2;
  }
  const auto play = [&](std::size_t i) {
    std::uint8_t uuid[16];
    std::memcpy(uuid, uuids[i % uuids.size()].data(), 16);
    return play_traced_process(uuid, kernels, spacing_ns, steps);
  };
  const char* injection = std::getenv(kInjectionVariable);
  std::printf("%s=%s\n", kInjectionVariable, injection != nullptr ? injection : "");
  const char* dir = std::getenv(kTraceDirVariable);
  std::printf("%s=%s\n", kTraceDirVariable, dir != nullptr ? dir : "");
  for (const char* name : {kNvtxInjectionVariable, kTraceKindsVariable}) {
    const char* value = std::getenv(name);
    std::printf("%s=%s\n", name, value != nullptr ? value : "");
  }
  std::fflush(stdout);

  // What the CUDA driver does with CUDA_INJECTION64_PATH.
  if (injection != nullptr && *injection != '\0') {
    void* library = dlopen(injection, RTLD_NOW);
    if (library == nullptr) {
      std::fprintf(stderr, "fake_cuda_job: %s\n", dlerror());
      return 4;
    }
    using Init = int (*)();
    auto init = reinterpret_cast<Init>(dlsym(library, "InitializeInjection"));
    if (init == nullptr || init() != 1) {
      std::fprintf(stderr, "fake_cuda_job: InitializeInjection missing or failed\n");
      return 4;
    }
  }

  // What NVTX does with NVTX_INJECTION64_PATH at the first NVTX call: load the tool and hand it
  // its export-table getter (here one that offers no table), expecting 1.
  if (const char* nvtx = std::getenv(kNvtxInjectionVariable); nvtx != nullptr && *nvtx != '\0') {
    void* library = dlopen(nvtx, RTLD_NOW);
    using InitNvtx = int (*)(const void*);
    auto init = library != nullptr
                    ? reinterpret_cast<InitNvtx>(dlsym(library, "InitializeInjectionNvtx2"))
                    : nullptr;
    const int result = init != nullptr ? init(reinterpret_cast<const void*>(&no_export_table)) : -1;
    std::printf("InitializeInjectionNvtx2=%d\n", result);
    std::fflush(stdout);
  }

  for (int i = 0; i < forks; ++i) {
    const pid_t child = fork();
    if (child == 0) std::exit(play(static_cast<std::size_t>(i)));  // atexit: not the library's
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 5;
  }
  return play(static_cast<std::size_t>(forks));
}
