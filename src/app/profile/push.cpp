#include "app/profile/push.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "core/error.hpp"
#include "exporter/curl_transport.hpp"
#include "exporter/push_auth.hpp"
#include "exporter/push_url.hpp"
#include "util/environment.hpp"

namespace gpuscope::app {

void check_push_options(const PushOptions& o) {
  if (o.tls.any() && !o.enabled()) {
    throw Error::usage("--push-cert, --push-key and --push-ca are for --push",
                       "they were given without --push URL", "add --push URL, or drop them");
  }
}

std::unique_ptr<exporter::Pusher> make_pusher(const PushOptions& o,
                                              const exporter::Exposition& exposition,
                                              bool save_undelivered) {
  auto target = exporter::parse_push_url(o.url);
  auto auth = exporter::load_push_auth(o.auth_file, util::process_environment());
  exporter::check_push_tls(o.tls);
  if (o.batch_ms < 10 || o.retry_max_ms < 10) {
    throw Error::usage("--push-batch-ms and --push-retry-max-ms must be at least 10");
  }
  exporter::PusherOptions options;
  options.batch_interval = std::chrono::milliseconds(static_cast<std::int64_t>(o.batch_ms));
  options.backoff_max = std::chrono::milliseconds(static_cast<std::int64_t>(o.retry_max_ms));
  options.backoff_initial = std::min(options.backoff_initial, options.backoff_max);
  options.buffer.spill_dir = o.spill_dir;
  options.save_undelivered = save_undelivered;
  return std::make_unique<exporter::Pusher>(
      std::make_unique<exporter::CurlTransport>(target.url, auth, o.tls), exposition, options,
      [](const std::string& line) { fmt::print(stderr, "gpuscope: {}\n", line); });
}

void report_push(const exporter::PushSummary& s, const PushOptions& o) {
  if (s.lines_saved > 0) {
    fmt::print(stderr,
               "gpuscope: warning: push: {} samples could not be delivered to {} before gpuscope "
               "stopped ({} delivered); they are saved in {}: send them when the server is back "
               "with: curl --data-binary @{} {}\n",
               s.lines_saved, o.url, s.lines_sent, s.saved_file.string(), s.saved_file.string(),
               s.destination);
  }
  if (s.lines_pending > 0) {
    fmt::print(stderr,
               "gpuscope: warning: push: {} samples could not be delivered to {} before gpuscope "
               "stopped ({} delivered)\n",
               s.lines_pending, o.url, s.lines_sent);
  }
  if (s.lines_dropped > 0) {
    fmt::print(stderr,
               "gpuscope: warning: push: {} samples were dropped (see the messages above)\n",
               s.lines_dropped);
  }
}

}  // namespace gpuscope::app
