// libFuzzer target: text logs as the ingest layer reads them (docs/logs.md): nvidia-smi's
// --query-gpu CSV and dmon, and dcgmi dmon, through import_inputs into a run database. The first
// byte chooses the format, the second the read options (zone, GPUs per tick, --query-gpu,
// --log-start); the rest is the log. Seeds are the tests' fixtures.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>

#include "core/error.hpp"
#include "fuzz_file.hpp"
#include "ingest/import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  static const char* const kFormats[] = {"nvidia-smi-csv", "nvidia-smi-dmon", "dcgmi-dmon"};
  gpuscope::ingest::ReadOptions options;
  options.format = kFormats[data[0] % 3];
  options.timezone = (data[1] & 1U) != 0 ? "UTC" : "+05:30";
  if ((data[1] & 2U) != 0) options.gpus = 1U + (data[1] >> 4U);
  if ((data[1] & 4U) != 0) options.query_gpu = "timestamp,index,power.draw,utilization.gpu";
  if ((data[1] & 8U) != 0) options.start = "2026-11-25 10:00:00";
  const gpuscope::fuzz::InputFile log(data + 2, size - 2, ".log");
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
