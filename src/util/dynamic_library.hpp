// Opening a shared library gpuscope loads at run time (NVML, DCGM): the first of several names
// that opens, and dlerror()'s words for the one that matters when none does.
#pragma once

#include <initializer_list>
#include <string>

namespace gpuscope::util {

// dlerror()'s text, or "unknown dlopen error" when it has none.
std::string dlerror_text();

struct OpenedLibrary {
  void* handle = nullptr;  // null when none opened
  std::string name;        // the name that opened
  std::string error;       // otherwise: why the first name did not
};

// dlopen(RTLD_NOW | RTLD_LOCAL) of each name in turn, until one opens.
OpenedLibrary dlopen_first(std::initializer_list<const char*> names);

}  // namespace gpuscope::util
