// libFuzzer target: a run database as analyze, export --perfetto and kernels read it, through
// the real command line in-process (cli::run), so every reader path a user's file reaches is
// covered: schema and version checks, the run, device and metric tables, samples and their
// columnar chunks, events, output lines, the kernel trace. A bad file must end in a message and
// exit code 1 or 2; never a crash, a hang or unbounded memory. Seeds are small databases written
// by `gpuscope profile --simulate` (scripts/fuzz.sh makes them).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/app.hpp"
#include "fuzz_file.hpp"

namespace {

int run_command(std::vector<std::string> words) {
  std::vector<char*> argv;
  argv.reserve(words.size() + 1);
  for (auto& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  return gpuscope::cli::run(static_cast<int>(words.size()), argv.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const gpuscope::fuzz::InputFile file(data, size, ".db");
  const std::string trace = file.path() + ".perfetto.json";
  for (const auto& command :
       {std::vector<std::string>{"gpuscope", "analyze", file.path(), "--json"},
        std::vector<std::string>{"gpuscope", "export", "--perfetto", file.path(), trace, "-f"},
        std::vector<std::string>{"gpuscope", "kernels", file.path()}}) {
    const int status = run_command(command);
    if (status != 0 && status != 1 && status != 2) __builtin_trap();  // documented exit codes
  }
  std::remove(trace.c_str());
  return 0;
}
