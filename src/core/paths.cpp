#include "core/paths.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <system_error>

#include "core/error.hpp"
#include "util/dynamic_library.hpp"

namespace gpuscope {

std::filesystem::path executable_dir() {
  std::error_code error;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return std::filesystem::current_path();
  return exe.parent_path();
}

std::filesystem::path private_library_dir() {
  return (executable_dir() / ".." / "lib" / "gpuscope").lexically_normal();
}

void* private_library_symbol(const char* file_name, const char* symbol,
                             const std::string& needed_by, const std::string& install_hint) {
  const std::string library = (private_library_dir() / file_name).string();
  const auto opened = util::dlopen_first({library.c_str()});
  if (!opened.handle) {
    throw Error(fmt::format("{} needs {}", needed_by, library), opened.error,
                fmt::format("reinstall gpuscope (cmake --install puts it in lib/gpuscope; {})",
                            install_hint));
  }
  void* found = dlsym(opened.handle, symbol);
  if (found == nullptr) {
    throw Error(fmt::format("{} has no {}", library, symbol), "it is from another gpuscope",
                "reinstall gpuscope");
  }
  return found;
}

std::filesystem::path data_dir() {
  return (executable_dir() / ".." / "share" / "gpuscope").lexically_normal();
}

}  // namespace gpuscope
