#include "exporter/metrics_server.hpp"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string_view>
#include <utility>

#include "core/error.hpp"

namespace gpuscope::exporter {
namespace {

constexpr const char* kExpositionType = "text/plain; version=0.0.4; charset=utf-8";
constexpr int kTimeoutS = 5;  // an idle keep-alive connection, or a request that stalls
// A scrape is a request line and a few headers; anything bigger is not a scraper. libevent
// answers 431/413 and closes, so a client streaming headers or a body holds no memory.
constexpr std::size_t kMaxHeaderBytes = 8192;
constexpr std::size_t kMaxBodyBytes = 4096;
// After accept() failed for want of file descriptors, accepting pauses this long instead of
// retrying (and logging) in a tight loop.
constexpr timeval kAcceptPause{0, 250'000};
// libevent's own messages: at most this many lines a minute reach stderr.
constexpr int kLogLinesPerMinute = 10;

// Routes libevent's log through gpuscope's stderr convention, rate-limited: a flood of identical
// warnings (accept() at the descriptor limit printed a million lines in 5 s) costs a few lines,
// and the count of the suppressed ones is said with the next line that gets through.
void log_libevent(int severity, const char* message) {
  static std::mutex mutex;
  static std::chrono::steady_clock::time_point window;
  static int printed = 0;
  static long suppressed = 0;
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex);
  if (now - window >= std::chrono::minutes(1)) {
    window = now;
    printed = 0;
  }
  if (printed >= kLogLinesPerMinute) {
    ++suppressed;
    return;
  }
  ++printed;
  const char* level = severity >= EVENT_LOG_ERR ? "error" : "warning";
  if (suppressed > 0) {
    std::fprintf(stderr, "gpuscope: %s: serve: %s (%ld similar messages suppressed)\n", level,
                 message, suppressed);
    suppressed = 0;
  } else {
    std::fprintf(stderr, "gpuscope: %s: serve: %s\n", level, message);
  }
}

Error cannot_listen(const ListenAddress& address, std::string why) {
  return Error(fmt::format("cannot listen on {}", address.text()), std::move(why),
               "choose another address with --listen HOST:PORT");
}

// The listening socket, bound here rather than by the HTTP library so that a failure says why.
// SO_REUSEADDR only: SO_REUSEPORT would let two exporters share a port silently, each answering
// half of the scrapes. TCP_NODELAY is inherited by the accepted connections: without it the body,
// written after the headers, waits for the client's delayed ACK (40 ms a scrape).
int listen_on(const ListenAddress& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(address.port);
  if (const int rc = getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    throw cannot_listen(address, fmt::format("no such address: {}", gai_strerror(rc)));
  }
  const int fd = socket(found->ai_family, found->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                        found->ai_protocol);
  if (fd < 0) {
    const int error = errno;
    freeaddrinfo(found);
    throw cannot_listen(address, std::strerror(error));
  }
  const int yes = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
  const bool bound = bind(fd, found->ai_addr, found->ai_addrlen) == 0 && listen(fd, 128) == 0;
  const int error = errno;
  freeaddrinfo(found);
  if (!bound) {
    close(fd);
    throw cannot_listen(address, error == EADDRINUSE ? "the port is in use by another program"
                                                     : std::strerror(error));
  }
  return fd;
}

// Answers GET and HEAD with `body` (HEAD: the headers a GET would have, Content-Length
// included, and no body: libevent 2.1 sent the body, which broke the next response on a
// keep-alive connection); refuses anything else with 405. The body is not copied: `page` (null for
// a body that lives as long as the program) keeps it alive until libevent has sent it.
// `extra` are the web config's headers; `suffix` follows the body (copied).
void reply(evhttp_request* request, std::string_view body, const char* type,
           const std::vector<std::pair<std::string, std::string>>& extra,
           std::shared_ptr<const std::string> page = nullptr, std::string_view suffix = {}) {
  evkeyvalq* headers = evhttp_request_get_output_headers(request);
  for (const auto& [name, value] : extra) evhttp_add_header(headers, name.c_str(), value.c_str());
  const evhttp_cmd_type method = evhttp_request_get_command(request);
  evbuffer* out = evbuffer_new();
  if (method != EVHTTP_REQ_GET && method != EVHTTP_REQ_HEAD) {
    evhttp_add_header(headers, "Allow", "GET, HEAD");
    evhttp_add_header(headers, "Content-Type", "text/plain");
    evbuffer_add(out, "method not allowed\n", 19);
    evhttp_send_reply(request, 405, "Method Not Allowed", out);
  } else if (method == EVHTTP_REQ_HEAD) {
    evhttp_add_header(headers, "Content-Type", type);
    evhttp_add_header(headers, "Content-Length",
                      std::to_string(body.size() + suffix.size()).c_str());
    evhttp_send_reply(request, 200, "OK", nullptr);
  } else {
    evhttp_add_header(headers, "Content-Type", type);
    if (page) {
      evbuffer_add_reference(
          out, body.data(), body.size(),
          [](const void*, size_t, void* held) {
            delete static_cast<std::shared_ptr<const std::string>*>(held);
          },
          new std::shared_ptr<const std::string>(std::move(page)));
    } else {
      evbuffer_add_reference(out, body.data(), body.size(), nullptr, nullptr);
    }
    if (!suffix.empty()) evbuffer_add(out, suffix.data(), suffix.size());
    evhttp_send_reply(request, 200, "OK", out);
  }
  evbuffer_free(out);
}

}  // namespace

ExpositionCache::ExpositionCache(const LatestValues& values, Exposition exposition,
                                 std::optional<ProcessSource> processes,
                                 const NodeEnergySeries* node)
    : values_(values),
      exposition_(std::move(exposition)),
      processes_(std::move(processes)),
      node_(node) {}

std::shared_ptr<const std::string> ExpositionCache::page() {
  std::lock_guard lock(mutex_);
  const std::uint64_t looks = processes_ ? processes_->looks() : 0;
  const std::uint64_t node_version = node_ != nullptr ? node_->version() : 0;
  if (const std::int64_t version = values_.version();
      version != version_ || looks != looks_ || node_version != node_version_ || !page_) {
    Snapshot snapshot = values_.snapshot();
    std::string text;
    if (processes_) {
      const ProcessesNow now = processes_->latest();
      exposition_.set_workload(workload_labels(now, exposition_.naming()));
      text = exposition_.render(snapshot);
      text += render_processes(
          now, [this](unsigned device) { return exposition_.label_body(device); },
          processes_->max_per_gpu);
    } else {
      text = exposition_.render(snapshot);
    }
    if (node_ != nullptr) text += node_->render();
    page_ = std::make_shared<const std::string>(std::move(text));
    version_ = snapshot.version;
    looks_ = looks;
    node_version_ = node_version;
  }
  return page_;
}

ServerSecurity make_security(const WebConfig& config, std::vector<std::string>& notes) {
  ServerSecurity security;
  notes.insert(notes.end(), config.notes.begin(), config.notes.end());
  if (config.tls) security.tls = std::make_unique<TlsContext>(*config.tls, notes);
  if (!config.basic_auth_users.empty()) {
    security.auth = std::make_unique<BasicAuth>(config.basic_auth_users);
    if (!config.tls) {
      notes.push_back(
          fmt::format("warning: {} has basic_auth_users but no tls_server_config: "
                      "passwords cross the network in clear text",
                      config.path));
    }
  }
  security.headers = config.headers;
  return security;
}

MetricsServer::MetricsServer(ListenAddress address, ExpositionCache& cache, ServerSecurity security)
    : address_(std::move(address)), cache_(cache), security_(std::move(security)) {}

namespace {

// The address of the client that sent `request` ("" when unknown), to bound its checks.
std::string client_of(evhttp_request* request) {
  evhttp_connection* connection = evhttp_request_get_connection(request);
  if (connection == nullptr) return {};
  char* host = nullptr;
  ev_uint16_t port = 0;
  evhttp_connection_get_peer(connection, &host, &port);
  return host != nullptr ? host : "";
}

}  // namespace

void MetricsServer::admit(evhttp_request* request, Answer answer) {
  if (!security_.auth) {
    answer(*this, request);
    return;
  }
  const char* authorization =
      evhttp_find_header(evhttp_request_get_input_headers(request), "Authorization");
  const BasicAuth::Verdict verdict = security_.auth->check(
      authorization, client_of(request), [this, request, answer](BasicAuth::Verdict later) {
        // On a worker thread: the loop answers it (checks_done).
        {
          std::lock_guard lock(checked_mutex_);
          checked_.push_back({request, answer, later});
        }
        event_active(checked_event_, EV_READ, 0);
      });
  if (verdict != BasicAuth::Verdict::Pending) respond(request, answer, verdict);
}

void MetricsServer::respond(evhttp_request* request, Answer answer, BasicAuth::Verdict verdict) {
  if (verdict == BasicAuth::Verdict::Allowed) {
    answer(*this, request);
    return;
  }
  evkeyvalq* headers = evhttp_request_get_output_headers(request);
  for (const auto& [name, value] : security_.headers) {
    evhttp_add_header(headers, name.c_str(), value.c_str());
  }
  evhttp_add_header(headers, "Content-Type", "text/plain");
  evbuffer* out = evbuffer_new();
  if (verdict == BasicAuth::Verdict::Busy) {
    // Too many password checks waiting: refused without one, so a flood of wrong passwords
    // costs its senders the wait, not the scrapers whose credentials are known.
    evhttp_add_header(headers, "Retry-After", "1");
    constexpr std::string_view kBusy = "too many password checks at once; retry\n";
    evbuffer_add(out, kBusy.data(), kBusy.size());
    evhttp_send_reply(request, 503, "Service Unavailable", out);
  } else {
    evhttp_add_header(headers, "WWW-Authenticate", "Basic realm=\"gpuscope\", charset=\"UTF-8\"");
    evbuffer_add(out, "Unauthorized\n", 13);
    evhttp_send_reply(request, 401, "Unauthorized", out);
  }
  evbuffer_free(out);
}

std::vector<MetricsServer::Checked> MetricsServer::take_checked() {
  std::lock_guard lock(checked_mutex_);
  return std::exchange(checked_, {});
}

void MetricsServer::checks_done(int, short, void* self) {
  auto* server = static_cast<MetricsServer*>(self);
  for (const Checked& done : server->take_checked()) {
    server->respond(done.request, done.answer, done.verdict);
  }
}

std::string MetricsServer::own_series() const {
  std::string out;
  if (security_.auth) {
    out += fmt::format(
        "# HELP gpuscope_exporter_auth_failures_total Requests refused for missing or wrong "
        "basic-auth credentials.\n# TYPE gpuscope_exporter_auth_failures_total counter\n"
        "gpuscope_exporter_auth_failures_total {}\n"
        "# HELP gpuscope_exporter_auth_busy_total Requests refused without a password check "
        "because too many checks were waiting.\n# TYPE gpuscope_exporter_auth_busy_total counter\n"
        "gpuscope_exporter_auth_busy_total {}\n"
        "# HELP gpuscope_exporter_auth_checks_total bcrypt password checks run (credentials "
        "checked before are answered from memory).\n"
        "# TYPE gpuscope_exporter_auth_checks_total counter\n"
        "gpuscope_exporter_auth_checks_total {}\n",
        security_.auth->failures(), security_.auth->busy(), security_.auth->checks());
  }
  if (security_.tls) {
    out += fmt::format(
        "# HELP gpuscope_exporter_tls_handshake_failures_total TLS handshakes that ended with a "
        "fatal alert.\n# TYPE gpuscope_exporter_tls_handshake_failures_total counter\n"
        "gpuscope_exporter_tls_handshake_failures_total {}\n"
        "# HELP gpuscope_exporter_tls_certificate_reloads_total Times the TLS certificate was "
        "re-read after its files changed.\n"
        "# TYPE gpuscope_exporter_tls_certificate_reloads_total counter\n"
        "gpuscope_exporter_tls_certificate_reloads_total {}\n",
        security_.tls->handshake_failures(), security_.tls->reloads());
  }
  return out;
}

bufferevent* MetricsServer::tls_connection(event_base* base, void* self) {
  return static_cast<MetricsServer*>(self)->security_.tls->new_connection(base);
}

MetricsServer::~MetricsServer() {
  stop();
}

void MetricsServer::serve_metrics(evhttp_request* request, void* self) {
  static_cast<MetricsServer*>(self)->admit(request, [](MetricsServer& server, evhttp_request* r) {
    auto page = server.cache_.page();
    const std::string_view body = *page;
    reply(r, body, kExpositionType, server.security_.headers, std::move(page), server.own_series());
  });
}

void MetricsServer::serve_index(evhttp_request* request, void* self) {
  static_cast<MetricsServer*>(self)->admit(request, [](MetricsServer& server, evhttp_request* r) {
    reply(r,
          "<html><head><title>gpuscope exporter</title></head><body><h1>gpuscope exporter</h1>"
          "<p><a href=\"/metrics\">/metrics</a></p></body></html>\n",
          "text/html; charset=utf-8", server.security_.headers);
  });
}

void MetricsServer::serve_health(evhttp_request* request, void* self) {
  static_cast<MetricsServer*>(self)->admit(request, [](MetricsServer& server, evhttp_request* r) {
    reply(r, "ok\n", "text/plain", server.security_.headers);
  });
}

void MetricsServer::serve_other(evhttp_request* request, void* self) {
  // Every path asks for credentials first, as exporter-toolkit does: a 404 says nothing then.
  static_cast<MetricsServer*>(self)->admit(
      request, [](MetricsServer&, evhttp_request* r) { evhttp_send_error(r, 404, "Not Found"); });
}

namespace {

// The server of each listener: libevent hands the error callback evhttp's own context, not ours.
std::mutex servers_mutex;
std::map<evconnlistener*, MetricsServer*>& servers_by_listener() {
  static std::map<evconnlistener*, MetricsServer*> servers;
  return servers;
}

}  // namespace

void MetricsServer::accept_failed(evconnlistener* listener, void*) {
  const int error = errno;
  MetricsServer* server = nullptr;
  {
    std::lock_guard lock(servers_mutex);
    const auto found = servers_by_listener().find(listener);
    if (found != servers_by_listener().end()) server = found->second;
  }
  if (server == nullptr) return;
  if (error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM) {
    // Out of descriptors or memory: pause instead of spinning on the pending connection.
    evconnlistener_disable(listener);
    evtimer_add(server->resume_, &kAcceptPause);
    log_libevent(EVENT_LOG_WARN,
                 fmt::format("cannot accept a connection ({}); accepting again in {} ms",
                             std::strerror(error), kAcceptPause.tv_usec / 1000)
                     .c_str());
  } else {
    log_libevent(EVENT_LOG_WARN,
                 fmt::format("cannot accept a connection ({})", std::strerror(error)).c_str());
  }
}

void MetricsServer::resume_accepting(int, short, void* self) {
  auto* server = static_cast<MetricsServer*>(self);
  if (server->listener_) evconnlistener_enable(server->listener_);
}

void MetricsServer::start() {
  // So that stop() may break the loop from another thread.
  static const int threads = evthread_use_pthreads();
  (void)threads;
  event_set_log_callback(&log_libevent);
  const int fd = listen_on(address_);
  base_ = event_base_new();
  http_ = base_ ? evhttp_new(base_) : nullptr;
  evhttp_bound_socket* bound = http_ ? evhttp_accept_socket_with_handle(http_, fd) : nullptr;
  resume_ = base_ ? evtimer_new(base_, &MetricsServer::resume_accepting, this) : nullptr;
  checked_event_ = base_ ? event_new(base_, -1, 0, &MetricsServer::checks_done, this) : nullptr;
  if (!bound || !resume_ || !checked_event_) {
    if (!bound) close(fd);
    stop();
    throw cannot_listen(address_, "the HTTP server could not be set up (out of memory?)");
  }
  listener_ = evhttp_bound_socket_get_listener(bound);
  {
    std::lock_guard lock(servers_mutex);
    servers_by_listener()[listener_] = this;
  }
  evconnlistener_set_error_cb(listener_, &MetricsServer::accept_failed);
  evhttp_set_timeout(http_, kTimeoutS);
  evhttp_set_max_headers_size(http_, kMaxHeaderBytes);
  evhttp_set_max_body_size(http_, kMaxBodyBytes);
  // Every method reaches the handlers, which answer 405 where libevent would say 501.
  evhttp_set_allowed_methods(http_, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST |
                                        EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
                                        EVHTTP_REQ_PATCH);
  evhttp_set_cb(http_, "/metrics", &MetricsServer::serve_metrics, this);
  evhttp_set_cb(http_, "/healthz", &MetricsServer::serve_health, this);
  evhttp_set_cb(http_, "/", &MetricsServer::serve_index, this);
  evhttp_set_gencb(http_, &MetricsServer::serve_other, this);
  if (security_.tls) {
    // OpenSSL writes with write(), not send(MSG_NOSIGNAL): a client gone mid-handshake would
    // kill the exporter with SIGPIPE (300 handshakes at once did). A server ignores it.
    std::signal(SIGPIPE, SIG_IGN);
    evhttp_set_bevcb(http_, &MetricsServer::tls_connection, this);
  }
  thread_ = std::thread([base = base_] { event_base_dispatch(base); });
}

void MetricsServer::stop() {
  if (thread_.joinable()) {
    event_base_loopbreak(base_);
    thread_.join();
  }
  if (listener_) {
    std::lock_guard lock(servers_mutex);
    servers_by_listener().erase(listener_);
  }
  // The checks in flight end (queued ones are dropped, as Busy) before the requests they
  // answer are freed with the connections: each is answered here, the loop being gone.
  if (security_.auth) security_.auth->stop();
  for (const Checked& done : take_checked()) respond(done.request, done.answer, done.verdict);
  if (checked_event_) event_free(checked_event_);
  if (resume_) event_free(resume_);
  if (http_) evhttp_free(http_);  // closes the listening socket and the connections
  if (base_) event_base_free(base_);
  resume_ = nullptr;
  checked_event_ = nullptr;
  listener_ = nullptr;
  http_ = nullptr;
  base_ = nullptr;
}

}  // namespace gpuscope::exporter
