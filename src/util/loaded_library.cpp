#include "util/loaded_library.hpp"

#include <dlfcn.h>

#include <utility>

namespace gpuscope::util {

LoadedLibrary::LoadedLibrary(void* handle, std::string path)
    : handle_(handle), path_(std::move(path)) {}

LoadedLibrary::~LoadedLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

LoadedLibrary::Found LoadedLibrary::find(const char* id, Requirement requirement,
                                         std::initializer_list<const char*> symbols) {
  Resolution resolution{id, requirement, {}, {}};
  Found found{nullptr, *symbols.begin()};
  for (const char* symbol : symbols) {
    resolution.candidates.emplace_back(symbol);
    if (found.address != nullptr) continue;
    if (void* address = address_of(symbol); address != nullptr) {
      found = {address, symbol};
      resolution.resolved = symbol;
    }
  }
  resolutions_.push_back(std::move(resolution));
  return found;
}

void* LoadedLibrary::address_of(const char* name) const {
  return dlsym(handle_, name);
}

std::string LoadedLibrary::missing_required() const {
  std::string missing;
  for (const Resolution& resolution : resolutions_) {
    if (resolution.requirement != Requirement::Required || resolution.found()) continue;
    if (!missing.empty()) missing += ", ";
    for (std::size_t i = 0; i < resolution.candidates.size(); ++i) {
      missing += (i == 0 ? "" : " or ") + resolution.candidates[i];
    }
  }
  return missing;
}

}  // namespace gpuscope::util
