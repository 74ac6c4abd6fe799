// Loads lib/gpuscope/libgpuscope_webconfig.so (the web config's reader and yaml-cpp) on the first
// --web-config, so that serve without one maps neither.
#include <dlfcn.h>
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/paths.hpp"
#include "export/web_config.hpp"
#include "util/dynamic_library.hpp"

namespace gpuscope::exporter {

WebConfig load_web_config(const std::string& path) {
  using Read = void (*)(const char*, WebConfig*);
  static const Read read = [] {
    const std::string library = (private_library_dir() / "libgpuscope_webconfig.so").string();
    const auto opened = util::dlopen_first({library.c_str()});
    if (!opened.handle) {
      throw Error(fmt::format("--web-config needs {}", library), opened.error,
                  "reinstall gpuscope (cmake --install puts it in lib/gpuscope; it needs "
                  "yaml-cpp: apt install libyaml-cpp0.7)");
    }
    auto* found = reinterpret_cast<Read>(dlsym(opened.handle, "gpuscope_read_web_config"));
    if (found == nullptr) {
      throw Error(fmt::format("{} has no gpuscope_read_web_config", library),
                  "it is from another gpuscope", "reinstall gpuscope");
    }
    return found;
  }();
  WebConfig config;
  read(path.c_str(), &config);
  return config;
}

}  // namespace gpuscope::exporter
