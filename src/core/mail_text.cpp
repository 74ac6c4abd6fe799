#include "core/mail_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <random>

#include "util/secret_text.hpp"

namespace gpuscope {
namespace {

std::string one_line(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) out += c;
  }
  return out;
}

// RFC 2047's encoded word for a subject that is not plain ASCII, in pieces of at most 45 bytes
// (60 base64 characters) cut between UTF-8 characters.
std::string encoded_subject(const std::string& subject) {
  const bool ascii = std::all_of(subject.begin(), subject.end(),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (ascii) return subject;
  std::string out;
  std::size_t at = 0;
  while (at < subject.size()) {
    std::size_t end = std::min(subject.size(), at + 45);
    while (end < subject.size() && end > at &&
           (static_cast<unsigned char>(subject[end]) & 0xC0) == 0x80) {
      --end;
    }
    if (!out.empty()) out += "\r\n ";
    out += "=?UTF-8?B?" + util::base64(subject.substr(at, end - at)) + "?=";
    at = end;
  }
  return out;
}

std::string crlf(const std::string& body) {
  std::string out;
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '\n' && (i == 0 || body[i - 1] != '\r')) out += '\r';
    out += body[i];
  }
  if (out.size() < 2 || out.compare(out.size() - 2, 2, "\r\n") != 0) out += "\r\n";
  return out;
}

std::string join(const std::vector<std::string>& addresses) {
  std::string out;
  for (const auto& a : addresses) out += (out.empty() ? "" : ", ") + one_line(a);
  return out;
}

}  // namespace

bool plain_address(const std::string& address) {
  if (address.empty() || address.size() > 254) return false;
  if (std::count(address.begin(), address.end(), '@') != 1) return false;
  if (address.front() == '@' || address.back() == '@') return false;
  return std::none_of(address.begin(), address.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u <= 0x20 || u == 0x7f || c == '<' || c == '>' || c == '"' || c == ',' || c == ';' ||
           c == '(' || c == ')' || c == '\\';
  });
}

std::string mail_message(const MailText& mail, std::int64_t now_ms, const std::string& host) {
  const std::time_t seconds = static_cast<std::time_t>(now_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char date[64];
  std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S +0000", &utc);
  std::random_device random;
  std::string message = fmt::format("From: {}\r\nTo: {}\r\n", one_line(mail.from), join(mail.to));
  if (!mail.cc.empty()) message += fmt::format("Cc: {}\r\n", join(mail.cc));
  message += fmt::format(
      "Subject: {}\r\nDate: {}\r\nMessage-ID: <{}.{:08x}@{}>\r\nMIME-Version: 1.0\r\n"
      "Content-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 8bit\r\n"
      "Auto-Submitted: auto-generated\r\n\r\n",
      encoded_subject(one_line(mail.subject)), date, now_ms, random(), one_line(host));
  return message + crlf(mail.body);
}

}  // namespace gpuscope
