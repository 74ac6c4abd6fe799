// libFuzzer target: gssr's files as the ingest layer reads them (ingest/tools/gssr_profile.hpp,
// ingest/tools/gssr_export.hpp). The first byte chooses the reader: 0, a process file's JSON
// (Python's NaN words, nesting, types, series lengths); 1, the rest written to a file and read as
// gssr's exported SQLite (tables, columns, keys, times). Seeds are the tests' fixtures.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fuzz_file.hpp"
#include "ingest/tools/gssr_export.hpp"
#include "ingest/tools/gssr_profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::vector<std::string> notes;
  try {
    if (data[0] == 0) {
      const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
      (void)gpuscope::ingest::gssr::parse_process(text, "fuzz_proc_0.json", notes);
    } else {
      const gpuscope::fuzz::InputFile file(data + 1, size - 1, ".sqlite");
      (void)gpuscope::ingest::gssr::read_export(file.path(), notes);
    }
  } catch (const gpuscope::Error&) {
  }
  return 0;
}
