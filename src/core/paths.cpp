#include "core/paths.hpp"

#include <system_error>

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

std::filesystem::path data_dir() {
  return (executable_dir() / ".." / "share" / "gpuscope").lexically_normal();
}

}  // namespace gpuscope
