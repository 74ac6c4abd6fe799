#include "export/metrics_server.hpp"

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/thread.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "core/error.hpp"

namespace gpuscope::exporter {
namespace {

constexpr const char* kExpositionType = "text/plain; version=0.0.4; charset=utf-8";
constexpr int kTimeoutS = 5;  // an idle keep-alive connection, or a request that stalls

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

// Answers GET and HEAD with `body` (libevent leaves the body out for HEAD); refuses anything
// else with 405. The body is not copied: `page` (null for a body that lives as long as the
// program) keeps it alive until libevent has sent it.
void reply(evhttp_request* request, std::string_view body, const char* type,
           std::shared_ptr<const std::string> page = nullptr) {
  evkeyvalq* headers = evhttp_request_get_output_headers(request);
  const evhttp_cmd_type method = evhttp_request_get_command(request);
  evbuffer* out = evbuffer_new();
  if (method != EVHTTP_REQ_GET && method != EVHTTP_REQ_HEAD) {
    evhttp_add_header(headers, "Allow", "GET, HEAD");
    evhttp_add_header(headers, "Content-Type", "text/plain");
    evbuffer_add(out, "method not allowed\n", 19);
    evhttp_send_reply(request, 405, "Method Not Allowed", out);
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
    evhttp_send_reply(request, 200, "OK", out);
  }
  evbuffer_free(out);
}

}  // namespace

ExpositionCache::ExpositionCache(const LatestValues& values, Exposition exposition)
    : values_(values), exposition_(std::move(exposition)) {}

std::shared_ptr<const std::string> ExpositionCache::page() {
  std::lock_guard lock(mutex_);
  if (const std::int64_t version = values_.version(); version != version_ || !page_) {
    Snapshot snapshot = values_.snapshot();
    page_ = std::make_shared<const std::string>(exposition_.render(snapshot));
    version_ = snapshot.version;
  }
  return page_;
}

MetricsServer::MetricsServer(ListenAddress address, ExpositionCache& cache)
    : address_(std::move(address)), cache_(cache) {}

MetricsServer::~MetricsServer() {
  stop();
}

void MetricsServer::serve_metrics(evhttp_request* request, void* self) {
  auto page = static_cast<MetricsServer*>(self)->cache_.page();
  const std::string_view body = *page;
  reply(request, body, kExpositionType, std::move(page));
}

void MetricsServer::serve_index(evhttp_request* request, void*) {
  reply(request,
        "<html><head><title>gpuscope exporter</title></head><body><h1>gpuscope exporter</h1>"
        "<p><a href=\"/metrics\">/metrics</a></p></body></html>\n",
        "text/html; charset=utf-8");
}

void MetricsServer::serve_health(evhttp_request* request, void*) {
  reply(request, "ok\n", "text/plain");
}

void MetricsServer::start() {
  // So that stop() may break the loop from another thread.
  static const int threads = evthread_use_pthreads();
  (void)threads;
  const int fd = listen_on(address_);
  base_ = event_base_new();
  http_ = base_ ? evhttp_new(base_) : nullptr;
  if (!http_ || !evhttp_accept_socket_with_handle(http_, fd)) {
    close(fd);
    stop();
    throw cannot_listen(address_, "the HTTP server could not be set up (out of memory?)");
  }
  evhttp_set_timeout(http_, kTimeoutS);
  // Every method reaches the handlers, which answer 405 where libevent would say 501.
  evhttp_set_allowed_methods(http_, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST |
                                        EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
                                        EVHTTP_REQ_PATCH);
  evhttp_set_cb(http_, "/metrics", &MetricsServer::serve_metrics, this);
  evhttp_set_cb(http_, "/healthz", &MetricsServer::serve_health, this);
  evhttp_set_cb(http_, "/", &MetricsServer::serve_index, this);
  // Any other path: libevent's 404.
  thread_ = std::thread([base = base_] { event_base_dispatch(base); });
}

void MetricsServer::stop() {
  if (thread_.joinable()) {
    event_base_loopbreak(base_);
    thread_.join();
  }
  if (http_) evhttp_free(http_);  // closes the listening socket and the connections
  if (base_) event_base_free(base_);
  http_ = nullptr;
  base_ = nullptr;
}

}  // namespace gpuscope::exporter
