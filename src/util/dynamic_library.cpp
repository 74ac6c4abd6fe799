#include "util/dynamic_library.hpp"

#include <dlfcn.h>

namespace gpuscope::util {

std::string dlerror_text() {
  const char* text = dlerror();
  return text != nullptr ? text : "unknown dlopen error";
}

OpenedLibrary dlopen_first(std::initializer_list<const char*> names) {
  OpenedLibrary out;
  dlerror();  // clear any stale error so the words are about these names
  for (const char* name : names) {
    if (void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
      out.handle = handle;
      out.name = name;
      out.error.clear();
      return out;
    }
    if (out.error.empty()) out.error = dlerror_text();  // the first name is the one that matters
  }
  return out;
}

}  // namespace gpuscope::util
