// `--listen HOST:PORT` for `gpuscope serve`.
#pragma once

#include <string>
#include <string_view>

#include "core/error.hpp"

namespace gpuscope::exporter {

struct ListenAddress {
  std::string host;  // "127.0.0.1", "0.0.0.0", "::1" (without brackets)
  int port = 0;
  bool loopback() const;
  std::string text() const;  // "127.0.0.1:9400", "[::1]:9400"
};

inline constexpr int kDefaultPort = 9400;  // dcgm-exporter's port, where dashboards look

// Parses "HOST:PORT", "[V6]:PORT", ":PORT" or "PORT" (host 127.0.0.1). Error::usage when
// malformed.
ListenAddress parse_listen_address(std::string_view text);

}  // namespace gpuscope::exporter
