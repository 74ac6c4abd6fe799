// Where `--push URL` sends samples: VictoriaMetrics' Prometheus-text import endpoint.
#pragma once

#include <string>
#include <string_view>

#include "core/error.hpp"

namespace gpuscope::exporter {

inline constexpr std::string_view kImportPath = "/api/v1/import/prometheus";

struct PushTarget {
  std::string url;  // the full import URL, e.g. http://127.0.0.1:8428/api/v1/import/prometheus
};

// Accepts http(s)://HOST[:PORT][/PREFIX]: a bare server (or a prefix such as vmauth's or a
// cluster's /insert/0/prometheus) gets kImportPath appended; a URL already ending in it is kept.
// Error::usage for anything else, and for credentials in the URL (they would show in `ps`).
PushTarget parse_push_url(std::string_view text);

}  // namespace gpuscope::exporter
