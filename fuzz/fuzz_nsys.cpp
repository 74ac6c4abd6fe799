// libFuzzer target: the Nsight Systems SQLite export reader (ingest/tools/nsys_export.hpp) and the
// summaries `gpuscope kernels` prints, on any bytes written to a file (seeds are valid exports,
// so the mutations reach table and column checks and the rows).
#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "fuzz_file.hpp"
#include "ingest/tools/nsys_export.hpp"
#include "kernels/summary.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const gpuscope::fuzz::InputFile file(data, size, ".sqlite");
  try {
    const auto exported =
        gpuscope::ingest::read_nsys_export(file.path(), gpuscope::kernels::NameColumn::Demangled);
    (void)gpuscope::kernels::kernel_summary(exported.kernels);
    (void)gpuscope::kernels::memory_summary(exported.memory);
  } catch (const gpuscope::Error&) {
  }
  return 0;
}
