// One mail sent over SMTP through libcurl (loaded at run time, core/curl_library.hpp): smtps://
// (TLS from the first byte) or smtp:// with STARTTLS required, so a notice never crosses the
// network in clear; AUTH with a user and password when given; a time limit.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace gpuscope::smtp {

struct Server {
  std::string url;   // smtps://host:465 or smtp://host:587 (STARTTLS)
  std::string user;  // AUTH; empty: none
  std::string password;
  std::string ca_file;  // the server's CA; empty: the system's
  std::chrono::milliseconds timeout{30'000};
};

// Sends `message` (RFC 5322 text, core/mail_text.hpp) from `from` to `recipients`. Throws Error
// naming the server and what it or curl said when the mail was not accepted.
void send(const Server& server, const std::string& from, const std::vector<std::string>& recipients,
          const std::string& message);

}  // namespace gpuscope::smtp
