// libFuzzer target: logs of nvidia-smi's detailed query (docs/logs.md, "nvidia-smi -q") as the
// ingest layer reads them, through import_inputs into a run database: the NVSMI LOG blocks, their
// Timestamp, the GPUs' indented sections of either driver generation, the ECC layouts, the
// processes, blocks cut off. The first byte chooses the read options (zone); the rest is the log.
// Seeds are the tests' fixtures.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>

#include "core/error.hpp"
#include "fuzz_file.hpp"
#include "ingest/import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  gpuscope::ingest::ReadOptions options;
  options.format = "nvidia-smi-query";
  options.timezone = (data[0] & 1U) != 0 ? "UTC" : "+05:30";
  const gpuscope::fuzz::InputFile log(data + 1, size - 1, ".log");
  const std::filesystem::path out = log.path() + ".db";
  std::error_code ignored;
  try {
    (void)gpuscope::ingest::import_inputs({log.path()}, out, true, options);
    // What an import wrote is there; a failed one left nothing.
    gpuscope::fuzz::require(std::filesystem::exists(out));
  } catch (const gpuscope::Error&) {
    gpuscope::fuzz::require(!std::filesystem::exists(out));
  }
  std::filesystem::remove(out, ignored);
  return 0;
}
