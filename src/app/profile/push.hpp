// `--push URL` and its companions as the profile and serve workflows use them: the options,
// checked before anything starts, then turned into a running Pusher (the command line that
// fills them is cli/push_options.hpp).
#pragma once

#include <memory>
#include <string>

#include "exporter/exposition.hpp"
#include "exporter/push_auth.hpp"
#include "exporter/pusher.hpp"

namespace gpuscope::app {

struct PushOptions {
  std::string url;             // --push URL; empty: no push
  std::string auth_file;       // --push-auth-file FILE
  std::string spill_dir;       // --push-spill-dir DIR
  exporter::PushTls tls;       // --push-cert, --push-key, --push-ca FILE
  double batch_ms = 1000;      // --push-batch-ms (hidden; tests)
  double retry_max_ms = 5000;  // --push-retry-max-ms (hidden; tests)
  bool enabled() const { return !url.empty(); }
};

// Error::usage for push options given without --push (call it whether or not there is a push).
void check_push_options(const PushOptions& options);

// A pusher for `options` (URL, credentials and TLS files checked: Error::usage when wrong), not yet
// started. `exposition` must outlive it. Messages go to stderr as "gpuscope: push: ...". With
// `save_undelivered`, what cannot be delivered when it finishes is saved to a file (`serve`).
std::unique_ptr<exporter::Pusher> make_pusher(const PushOptions& options,
                                              const exporter::Exposition& exposition,
                                              bool save_undelivered = false);

// Says on stderr what the push delivered and what it could not.
void report_push(const exporter::PushSummary& summary, const PushOptions& options);

}  // namespace gpuscope::app
