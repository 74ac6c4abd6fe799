// A mail as RFC 5322 text: the headers a mail needs (From, To, Subject, Date, Message-ID,
// MIME's UTF-8 plain text), the subject encoded by RFC 2047 when it is not ASCII, lines ended by
// CRLF. What guard's SMTP and sendmail notices send (core/smtp.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuscope {

struct MailText {
  std::string from;
  std::vector<std::string> to;
  std::vector<std::string> cc;
  std::string subject;  // one line (control characters are dropped)
  std::string body;     // \n or \r\n line ends
};

// The message, ready for SMTP's DATA or `sendmail -t`. `now_ms` dates it; `host` ends its
// Message-ID.
std::string mail_message(const MailText& mail, std::int64_t now_ms, const std::string& host);

// Whether `address` is a bare address gpuscope will send to: one @, no spaces, no control
// characters, no <>, quotes, commas or semicolons (no second recipient smuggled in).
bool plain_address(const std::string& address);

}  // namespace gpuscope
