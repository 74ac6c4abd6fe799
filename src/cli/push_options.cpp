#include "cli/push_options.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "cli/number_option.hpp"
#include "core/error.hpp"
#include "exporter/curl_transport.hpp"
#include "exporter/push_auth.hpp"
#include "exporter/push_url.hpp"

namespace gpuscope::cli {

void add_push_options(CLI::App& app, app::PushOptions& o) {
  app.add_option("--push", o.url,
                 "Also push samples to VictoriaMetrics at URL (/api/v1/import/prometheus), in "
                 "batches, buffering while it is away; credentials from GPUSCOPE_PUSH_USER/"
                 "GPUSCOPE_PUSH_PASSWORD, GPUSCOPE_PUSH_BEARER_TOKEN or --push-auth-file")
      ->type_name("URL");
  app.add_option("--push-auth-file", o.auth_file,
                 "File whose first line is 'bearer TOKEN' or 'basic USER:PASSWORD'")
      ->type_name("FILE");
  app.add_option("--push-cert", o.tls.cert_file,
                 "Client certificate (PEM) for a server that asks for one (mutual TLS); its key "
                 "in the same file or --push-key")
      ->type_name("FILE");
  app.add_option("--push-key", o.tls.key_file, "Private key (PEM) of --push-cert")
      ->type_name("FILE");
  app.add_option("--push-ca", o.tls.ca_file,
                 "CA certificates (PEM) to trust for the server's certificate, instead of the "
                 "system's")
      ->type_name("FILE");
  app.add_option("--push-spill-dir", o.spill_dir,
                 "Where samples wait on disk while the server is away and memory is full "
                 "(default: a new directory under $TMPDIR)")
      ->type_name("DIR");
  constexpr NumberRange kPushMs{10, 3'600'000, "ms"};
  add_number_option(app, "--push-batch-ms", o.batch_ms, kPushMs, "How often a batch is sent (ms)")
      ->group("");
  add_number_option(app, "--push-retry-max-ms", o.retry_max_ms, kPushMs,
                    "Longest wait between retries (ms)")
      ->group("");
}

}  // namespace gpuscope::cli
