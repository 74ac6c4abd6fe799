#include "export/metrics_server.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace gpuscope::exporter {
namespace {

constexpr const char* kExpositionType = "text/plain; version=0.0.4; charset=utf-8";
// Enough workers for Prometheus, a browser and a load test's connections at once.
constexpr std::size_t kWorkerThreads = 8;

// Why binding `address` fails: tried with a plain socket, since the HTTP library only says no.
std::string bind_failure(const ListenAddress& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(address.port);
  if (const int rc = getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return fmt::format("no such address: {}", gai_strerror(rc));
  }
  std::string why = "unknown reason";
  const int fd = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  if (fd >= 0) {
    const int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (bind(fd, found->ai_addr, found->ai_addrlen) != 0 || listen(fd, 1) != 0) {
      why = errno == EADDRINUSE ? "the port is in use by another program" : std::strerror(errno);
    }
    close(fd);
  }
  freeaddrinfo(found);
  return why;
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

void MetricsServer::start() {
  server_ = std::make_unique<httplib::Server>();
  // SO_REUSEADDR only: the library's default SO_REUSEPORT would let two exporters share a port
  // silently, each answering half of the scrapes.
  server_->set_socket_options([](socket_t fd) {
    const int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server_->new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  // Without TCP_NODELAY the body, written after the headers, waits for the client's delayed ACK:
  // 40 ms a scrape.
  server_->set_tcp_nodelay(true);
  server_->set_keep_alive_timeout(5);
  server_->set_read_timeout(5, 0);
  server_->set_write_timeout(5, 0);
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
    const auto page = cache_.page();
    response.set_content(*page, kExpositionType);
  });
  server_->Get("/", [](const httplib::Request&, httplib::Response& response) {
    response.set_content(
        "<html><head><title>gpuscope exporter</title></head><body><h1>gpuscope exporter</h1>"
        "<p><a href=\"/metrics\">/metrics</a></p></body></html>\n",
        "text/html; charset=utf-8");
  });
  server_->Get("/healthz", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("ok\n", "text/plain");
  });
  if (!server_->bind_to_port(address_.host, address_.port)) {
    const std::string why = bind_failure(address_);
    server_.reset();
    throw Error(fmt::format("cannot listen on {}", address_.text()), why,
                "choose another address with --listen HOST:PORT");
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

void MetricsServer::stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

}  // namespace gpuscope::exporter
