#include "support/temp_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace gpuscope::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "gpuscope-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot make a temporary directory like " + pattern);
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;  // best effort: a leftover temp dir must not fail a test
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace gpuscope::testing
