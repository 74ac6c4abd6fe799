// Symbolic links planted where a writer might put a temporary file, each pointing at a victim:
// what someone who may write the output's folder (a shared /tmp, a world-writable results
// folder) does against gpuscope run as root. The test runs a writer and then checks
// that the victim is untouched. Header only, for every suite that tests a writer.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"

namespace gpuscope::testing {

// The names gpuscope's writers used before private staging folders for `target`
// (".<name>.<pid>.gpuscope-tmp" beside it, with SQLite's companions), for this process and the next
// few pids, and names one might guess for a newer scheme.
inline std::vector<std::filesystem::path> predictable_temporary_names(
    const std::filesystem::path& target) {
  const std::filesystem::path folder = target.parent_path();
  const std::string name = target.filename().string();
  std::vector<std::filesystem::path> names;
  for (pid_t pid = ::getpid(); pid < ::getpid() + 4; ++pid) {
    const std::string old = "." + name + "." + std::to_string(pid) + ".gpuscope-tmp";
    for (const char* suffix : {"", "-journal", "-wal", "-shm"}) {
      names.push_back(folder / (old + suffix));
    }
  }
  for (const std::string& guess : {"." + name + ".gpuscope-tmp", name + ".tmp", name + "~",
                                   "." + name + ".tmp", "." + name + ".gpuscope-tmp-XXXXXX"}) {
    names.push_back(folder / guess);
  }
  return names;
}

// A victim file and links to it at `names`.
class PlantedLinks {
 public:
  static constexpr const char* kVictimText = "precious: nobody but its owner writes this\n";

  PlantedLinks(const std::filesystem::path& victim, std::vector<std::filesystem::path> names)
      : victim_(victim), names_(std::move(names)) {
    std::ofstream(victim_) << kVictimText;
    for (const auto& name : names_) std::filesystem::create_symlink(victim_, name);
  }

  // The victim still holds what it held, and each link is still there, still pointing at it (a
  // writer that replaced a link by its rename would have lost the attack, not made it safe).
  ::testing::AssertionResult victim_untouched() const {
    if (read_file(victim_.string()) != kVictimText) {
      return ::testing::AssertionFailure()
             << victim_ << " was written through a planted link: " << read_file(victim_.string());
    }
    for (const auto& name : names_) {
      if (!std::filesystem::is_symlink(name)) {
        return ::testing::AssertionFailure() << name << " is no longer the planted link";
      }
    }
    return ::testing::AssertionSuccess();
  }

  const std::vector<std::filesystem::path>& names() const { return names_; }

 private:
  std::filesystem::path victim_;
  std::vector<std::filesystem::path> names_;
};

// What is in `folder` besides `expected` and the planted links: leftovers a writer should not
// leave (its staging folder, a temporary).
inline std::vector<std::string> leftovers(const std::filesystem::path& folder,
                                          const PlantedLinks& links,
                                          const std::vector<std::string>& expected) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    bool known = false;
    for (const auto& name : links.names()) known = known || entry.path() == name;
    for (const auto& name : expected) known = known || entry.path().filename() == name;
    if (!known) found.push_back(entry.path().filename().string());
  }
  return found;
}

}  // namespace gpuscope::testing
