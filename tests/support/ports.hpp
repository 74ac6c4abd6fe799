// TCP ports for tests that start servers (gpuscope serve, Prometheus, VictoriaMetrics).
#pragma once

namespace gpuscope::testing {

// A loopback port nobody listens on right now (the kernel's choice). Another process may still
// take it before the caller binds it: callers that can, retry.
int free_port();

}  // namespace gpuscope::testing
