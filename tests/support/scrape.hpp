// Reading a running exporter (gpuscope serve, a Prometheus) over HTTP on the loopback.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace gpuscope::testing {

// The body of GET `path` on 127.0.0.1:`port` when it answers 200, nullopt otherwise (no server
// yet, another status); 2 s to connect, 10 s to read.
std::optional<std::string> http_get(int port, const std::string& path);

// The /metrics page of the exporter on `port`, nullopt while it serves none.
std::optional<std::string> get_metrics(int port);

// The /metrics page once `has` holds for it, polled every 100 ms, or the last page served (""
// if none) when `limit` passes: generous, as CI machines are loaded.
std::string metrics_when(int port, const std::function<bool(const std::string&)>& has,
                         std::chrono::seconds limit = std::chrono::seconds(90));

}  // namespace gpuscope::testing
