// The HTTP side of `gpuscope serve`: GET /metrics answers from the latest rendered exposition,
// re-rendered only when a new sample arrived; a scrape never waits on NVML.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "exporter/basic_auth.hpp"
#include "exporter/exposition.hpp"
#include "exporter/latest_values.hpp"
#include "exporter/listen_address.hpp"
#include "exporter/node_energy_series.hpp"
#include "exporter/process_exposition.hpp"
#include "exporter/tls_context.hpp"
#include "exporter/web_config.hpp"

struct event;
struct event_base;
struct evconnlistener;
struct evhttp;
struct evhttp_request;
struct bufferevent;

namespace gpuscope::exporter {

// The /metrics page for the latest values, cached per LatestValues version.
// Where serve's page gets the processes on the GPUs (collect/process_watch.hpp): the latest
// look, and a count that changes with every look.
struct ProcessSource {
  std::function<ProcessesNow()> latest;
  std::function<std::uint64_t()> looks;
  std::size_t max_per_gpu = 8;
};

class ExpositionCache {
 public:
  // `node`: the node's own energy series, rendered after the GPUs' (none: no node series).
  ExpositionCache(const LatestValues& values, Exposition exposition,
                  std::optional<ProcessSource> processes = std::nullopt,
                  const NodeEnergySeries* node = nullptr);
  std::shared_ptr<const std::string> page();

 private:
  const LatestValues& values_;
  Exposition exposition_;
  std::optional<ProcessSource> processes_;
  const NodeEnergySeries* node_ = nullptr;
  std::uint64_t looks_ = 0;
  std::uint64_t node_version_ = 0;
  std::mutex mutex_;
  std::int64_t version_ = -1;
  std::shared_ptr<const std::string> page_;
};

// What a web config asks of the server (docs/live.md, "Security"): TLS, basic
// authentication on every path, extra response headers. Empty: plain HTTP, open, as before.
struct ServerSecurity {
  std::unique_ptr<TlsContext> tls;
  std::unique_ptr<BasicAuth> auth;
  std::vector<std::pair<std::string, std::string>> headers;
};

// The security of `config`: loads the TLS and crypt libraries it needs (only those), checks the
// certificate and key. Appends what the user should know to `notes`. Throws Error.
ServerSecurity make_security(const WebConfig& config, std::vector<std::string>& notes);

class MetricsServer {
 public:
  MetricsServer(ListenAddress address, ExpositionCache& cache, ServerSecurity security = {});
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds and starts serving on its own threads. Throws Error (exit 1) when the address cannot
  // be bound, saying why (in use, not permitted, no such address).
  void start();
  // Stops accepting, finishes the requests in flight and joins the server's threads.
  void stop();
  // The port actually bound (the one asked for).
  int port() const { return address_.port; }

 private:
  // What a request for a path gets once its credentials are good.
  using Answer = void (*)(MetricsServer& server, evhttp_request* request);
  // A request whose credentials a worker thread checks, with what it gets when they are good.
  struct Checked {
    evhttp_request* request;
    Answer answer;
    BasicAuth::Verdict verdict;
  };

  static void serve_metrics(evhttp_request* request, void* self);
  static void serve_index(evhttp_request* request, void* self);
  static void serve_health(evhttp_request* request, void* self);
  static void serve_other(evhttp_request* request, void* self);
  static bufferevent* tls_connection(event_base* base, void* self);
  // Answers the request with `answer` once its credentials are good: at once when no password
  // is asked for or the pair was checked before, else when a worker has checked it (never
  // waiting on the event loop). Bad credentials get 401, a full queue of checks 503.
  void admit(evhttp_request* request, Answer answer);
  void respond(evhttp_request* request, Answer answer, BasicAuth::Verdict verdict);
  // On the event loop: answers the requests whose checks ended.
  static void checks_done(int, short, void* self);
  std::vector<Checked> take_checked();
  // The server's own counters (authentication and handshake failures), in the exposition format.
  std::string own_series() const;
  static void accept_failed(evconnlistener* listener, void* self);
  static void resume_accepting(int, short, void* self);

  ListenAddress address_;
  ExpositionCache& cache_;
  ServerSecurity security_;
  event_base* base_ = nullptr;
  evhttp* http_ = nullptr;
  evconnlistener* listener_ = nullptr;
  event* resume_ = nullptr;         // re-enables accepting after the descriptors ran out
  event* checked_event_ = nullptr;  // made active by a worker when a check ended
  std::mutex checked_mutex_;
  std::vector<Checked> checked_;
  std::thread thread_;
};

}  // namespace gpuscope::exporter
