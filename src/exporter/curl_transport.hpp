// PushTransport over libcurl: one reused handle (keep-alive), POST text/plain, basic or bearer
// auth set on the handle (never in a message: a server that echoes the secret back has it
// blanked), a client certificate and a CA bundle when given (PushTls, checked beforehand), short
// connect timeout so an unreachable server costs the pusher thread little.
#pragma once

#include <memory>
#include <string>

#include "exporter/push_auth.hpp"
#include "exporter/pusher.hpp"

namespace gpuscope::exporter {

class CurlTransport : public PushTransport {
 public:
  CurlTransport(std::string url, PushAuth auth, PushTls tls = {});
  ~CurlTransport() override;
  PushResult post(const std::string& body) override;
  std::string destination() const override { return url_; }

 private:
  std::string url_;
  PushAuth auth_;
  PushTls tls_;              // curl keeps pointers to these strings
  std::string error_;        // CURLOPT_ERRORBUFFER (CURL_ERROR_SIZE bytes)
  void* curl_ = nullptr;     // CURL*
  void* headers_ = nullptr;  // curl_slist*
  std::string response_;
};

}  // namespace gpuscope::exporter
