// Where gpuscope's own files live. The build tree mirrors the install tree (bin/, lib/gpuscope/,
// share/gpuscope/), so both resolve relative to the running executable.
#pragma once

#include <filesystem>

namespace gpuscope {

// Directory holding the running executable (resolved through /proc/self/exe).
std::filesystem::path executable_dir();

// <prefix>/lib/gpuscope: the simulated-GPU library and other private libraries.
std::filesystem::path private_library_dir();

// <prefix>/share/gpuscope: scenarios and other data.
std::filesystem::path data_dir();

}  // namespace gpuscope
