// libFuzzer target: the small parsers of text users type: --listen addresses, --push URLs,
// --power-limits lists, --window-begin/--window-end patterns, serve's --web-config files and the
// Authorization headers it reads. The first byte picks the parser.
#include <cstddef>
#include <cstdint>
#include <regex>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "exporter/basic_auth.hpp"
#include "exporter/listen_address.hpp"
#include "exporter/push_url.hpp"
#include "exporter/web_config.hpp"
#include "sweep/plan.hpp"
#include "sweep/window.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 6) {
      case 0:
        (void)gpuscope::exporter::parse_listen_address(text);
        break;
      case 1:
        (void)gpuscope::exporter::parse_push_url(text);
        break;
      case 2: {
        const auto values = gpuscope::sweep::parse_settings(text, "--power-limits");
        gpuscope::sweep::check_range(values, 100, 700, "W", "--power-limits");
        (void)gpuscope::sweep::plan_trials(gpuscope::sweep::make_plan(values, 700), 2);
        break;
      }
      case 4:
        (void)gpuscope::exporter::parse_web_config(text, "/etc/gpuscope/web.yml");
        break;
      case 5:
        (void)gpuscope::exporter::parse_basic_authorization(text);
        break;
      default:
        // Patterns are user regular expressions; std::regex's own limits apply (bounded length).
        if (text.size() <= 256) (void)gpuscope::sweep::compile_marker(text, "--window-begin");
        break;
    }
  } catch (const gpuscope::Error&) {
  }
  return 0;
}
