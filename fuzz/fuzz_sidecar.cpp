// libFuzzer target: the CUPTI trace sidecar reader (trace/sidecar_reader.hpp) on any bytes, as
// `gpuscope kernels --import` and the end of `profile --trace-kernels` read files a job wrote
// (possibly cut short by a crash). Reads the metadata pass and the activity pass.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/error.hpp"
#include "fuzz_file.hpp"
#include "trace/sidecar_reader.hpp"

namespace {

struct CountingVisitor final : gpuscope::trace::ActivityVisitor {
  std::uint64_t records = 0;
  void kernel(const gpuscope::trace::KernelRecord&) override { ++records; }
  void memcpy(const gpuscope::trace::MemcpyRecord&) override { ++records; }
  void memset(const gpuscope::trace::MemsetRecord&) override { ++records; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const gpuscope::fuzz::InputFile file(data, size, ".gstrace");
  try {
    const auto meta = gpuscope::trace::read_sidecar_meta(file.path());
    CountingVisitor visitor;
    gpuscope::trace::for_each_activity(file.path(), visitor);
    (void)meta;
  } catch (const gpuscope::Error&) {
    // A refusal with a message is the expected answer to a bad file.
  }
  return 0;
}
