#include "exporter/listen_address.hpp"

#include <fmt/format.h>

#include <charconv>

namespace gpuscope::exporter {
namespace {

Error malformed(std::string_view text, std::string why) {
  return Error::usage(fmt::format("--listen '{}' is not an address to listen on", text),
                      std::move(why), "write HOST:PORT, e.g. 127.0.0.1:9400 or 0.0.0.0:9400");
}

}  // namespace

bool ListenAddress::loopback() const {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

std::string ListenAddress::text() const {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

ListenAddress parse_listen_address(std::string_view text) {
  ListenAddress address{"127.0.0.1", 0};
  std::string_view port_text = text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      throw malformed(text, "an IPv6 address goes in brackets: [::1]:9400");
    }
    address.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
    if (text.substr(0, colon).find(':') != std::string_view::npos) {
      throw malformed(text, "an IPv6 address goes in brackets: [::1]:9400");
    }
    if (colon > 0) address.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  int port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port < 1 || port > 65535) {
    throw malformed(text, fmt::format("the port '{}' is not a number in 1-65535", port_text));
  }
  if (address.host.empty()) throw malformed(text, "the host is empty");
  address.port = port;
  return address;
}

}  // namespace gpuscope::exporter
