#include "sim/state_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/small_file.hpp"

namespace gpuscope::sim {
namespace {

std::string system_error(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

}  // namespace

std::string default_state_path(const std::string& scenario_name) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string dir = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
  return dir + "/gpuscope-sim-" + std::to_string(getuid()) + "-" + scenario_name + ".json";
}

tl::expected<StateMap, std::string> StateFile::read() const {
  const auto text = read_small_file(path_, kMaxStateFileBytes);
  if (!text) {
    if (text.error().error == ENOENT) return StateMap{};
    if (text.error().error != 0) {
      return tl::make_unexpected("cannot read state file " + path_ + ": " +
                                 failure_text(text.error()));
    }
    // A device or a FIFO would never end (or never start); refuse it before reading a byte.
    return tl::make_unexpected("state file " + path_ + " " + failure_text(text.error()) +
                               "; point state_file at a regular file (or leave it out)");
  }
  StateMap entries;
  try {
    const nlohmann::json json = nlohmann::json::parse(*text);
    const int version = json.at("version").get<int>();
    if (version != kStateFileVersion) {
      return tl::make_unexpected("state file " + path_ + ": version " + std::to_string(version) +
                                 " is not " + std::to_string(kStateFileVersion) +
                                 " (delete it to reset)");
    }
    for (const auto& [uuid, gpu] : json.at("gpus").items()) {
      StateEntry entry;
      entry.power_limit_mw = gpu.at("power_limit_mw").get<unsigned>();
      entry.set_at_unix_ns = gpu.value("set_at_unix_ns", std::int64_t{0});
      entry.locked_min_mhz = gpu.value("locked_min_mhz", 0U);
      entry.locked_max_mhz = gpu.value("locked_max_mhz", 0U);
      entry.speed = gpu.value("speed", 1.0);
      entries[uuid] = entry;
    }
  } catch (const nlohmann::json::exception& error) {
    return tl::make_unexpected("state file " + path_ + ": " + error.what() +
                               " (delete it to reset)");
  }
  return entries;
}

tl::expected<void, std::string> StateFile::update(const StateMap& entries) {
  tl::expected<StateMap, std::string> merged = read();
  if (!merged) return tl::make_unexpected(merged.error());
  for (const auto& [uuid, entry] : entries) (*merged)[uuid] = entry;

  nlohmann::json json = {{"version", kStateFileVersion}, {"gpus", nlohmann::json::object()}};
  for (const auto& [uuid, entry] : *merged) {
    json["gpus"][uuid] = {{"power_limit_mw", entry.power_limit_mw},
                          {"locked_min_mhz", entry.locked_min_mhz},
                          {"locked_max_mhz", entry.locked_max_mhz},
                          {"set_at_unix_ns", entry.set_at_unix_ns},
                          {"speed", entry.speed}};
  }
  const std::string temporary = path_ + ".tmp." + std::to_string(getpid());
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) return tl::make_unexpected(system_error("cannot create", temporary));
    file << json.dump(2) << '\n';
    if (!file.flush()) return tl::make_unexpected(system_error("cannot write", temporary));
  }
  if (std::rename(temporary.c_str(), path_.c_str()) != 0) {
    const std::string message = system_error("cannot rename " + temporary + " to", path_);
    std::remove(temporary.c_str());
    return tl::make_unexpected(message);
  }
  last_ = signature();
  return {};
}

StateFile::Signature StateFile::signature() const {
  struct stat info {};
  if (stat(path_.c_str(), &info) != 0) return {};
  return {true, info.st_ino, info.st_size,
          std::int64_t{info.st_mtim.tv_sec} * 1'000'000'000 + info.st_mtim.tv_nsec};
}

bool StateFile::changed() {
  const Signature now = signature();
  if (now == last_) return false;
  last_ = now;
  return true;
}

}  // namespace gpuscope::sim
