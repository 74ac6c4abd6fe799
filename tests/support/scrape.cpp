#include "support/scrape.hpp"

#include <httplib.h>

#include <thread>

namespace gpuscope::testing {

std::optional<std::string> http_get(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(2, 0);
  client.set_read_timeout(10, 0);
  auto response = client.Get(path.c_str());
  if (!response || response->status != 200) return std::nullopt;
  return response->body;
}

std::optional<std::string> get_metrics(int port) {
  return http_get(port, "/metrics");
}

std::string metrics_when(int port, const std::function<bool(const std::string&)>& has,
                         std::chrono::seconds limit) {
  std::string page;
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (auto body = get_metrics(port)) {
      page = std::move(*body);
      if (has(page)) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return page;
}

}  // namespace gpuscope::testing
