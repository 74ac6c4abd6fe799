// Loads lib/gpuscope/libgpuscope_webconfig.so (the web config's reader and yaml-cpp) on the first
// --web-config, so that serve without one maps neither.
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/paths.hpp"
#include "exporter/web_config.hpp"
#include "util/small_file.hpp"

namespace gpuscope::exporter {

WebConfig load_web_config(const std::string& path) {
  constexpr std::size_t kMaxBytes = std::size_t{1} << 20;
  const auto text = util::read_small_file(path, kMaxBytes);
  if (!text) {
    throw Error::usage(fmt::format("cannot read the web config {}", path), text.error().reason,
                       "give the path of an exporter-toolkit web configuration file");
  }
  using Parse = void (*)(const std::string*, const std::string*, WebConfig*);
  static const auto parse = reinterpret_cast<Parse>(
      private_library_symbol("libgpuscope_webconfig.so", "gpuscope_parse_web_config",
                             "--web-config", "it needs yaml-cpp: apt install libyaml-cpp0.7"));
  WebConfig config;
  parse(&*text, &path, &config);
  if (!config.tls && config.basic_auth_users.empty()) {
    config.notes.push_back(fmt::format(
        "note: {} asks for neither TLS nor basic authentication: serving plain HTTP to anyone",
        path));
  }
  return config;
}

}  // namespace gpuscope::exporter
