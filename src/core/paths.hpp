// Where gpuscope's own files live. The build tree mirrors the install tree (bin/, lib/gpuscope/,
// share/gpuscope/), so both resolve relative to the running executable.
#pragma once

#include <filesystem>
#include <string>

namespace gpuscope {

// Directory holding the running executable (resolved through /proc/self/exe).
std::filesystem::path executable_dir();

// <prefix>/lib/gpuscope: the simulated-GPU library and other private libraries.
std::filesystem::path private_library_dir();

// The entry point `symbol` of the private library `file_name` (in private_library_dir()), opened
// on first use and kept. Throws Error naming what `needed_by` needs and how to get it back
// (`install_hint`: the library's own dependencies) when the library or the symbol is missing.
void* private_library_symbol(const char* file_name, const char* symbol,
                             const std::string& needed_by, const std::string& install_hint);

// <prefix>/share/gpuscope: scenarios and other data.
std::filesystem::path data_dir();

}  // namespace gpuscope
