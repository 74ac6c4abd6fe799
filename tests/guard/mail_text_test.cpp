// Mails as RFC 5322 text: the headers, CRLF line ends, a UTF-8 subject encoded by RFC 2047 and cut
// between characters, no header smuggled in through a subject or an address, and the addresses
// gpuscope sends to.
#include "core/mail_text.hpp"

#include <gtest/gtest.h>

namespace gpuscope {
namespace {

constexpr std::int64_t kNow = 1'795'948'800'000;  // 2026-11-29T10:40:00Z

TEST(MailText, HeadersAndCrlf) {
  const std::string m = mail_message({"gpuscope@example.org",
                                      {"alice@example.org"},
                                      {"hpc@example.org"},
                                      "Job 123 is idle",
                                      "line one\nline two\n"},
                                     kNow, "guard.example.org");
  EXPECT_EQ(m.rfind("From: gpuscope@example.org\r\nTo: alice@example.org\r\nCc: hpc@example.org\r\n"
                    "Subject: Job 123 is idle\r\nDate: Sun, 29 Nov 2026 10:40:00 +0000\r\n",
                    0),
            0u)
      << m;
  EXPECT_NE(m.find("@guard.example.org>\r\n"), std::string::npos);
  EXPECT_NE(m.find("Content-Type: text/plain; charset=UTF-8\r\n"), std::string::npos);
  EXPECT_NE(m.find("\r\n\r\nline one\r\nline two\r\n"), std::string::npos);
  EXPECT_EQ(m.find("two\n"), std::string::npos);  // every line end is CRLF
}

TEST(MailText, AUtf8SubjectIsEncodedAndNothingIsSmuggled) {
  std::string subject = "Tâche ";
  for (int i = 0; i < 30; ++i) subject += "é";
  subject += "\r\nBcc: all@example.org";
  const std::string m = mail_message({"a@b.org", {"c@d.org"}, {}, subject, "x"}, kNow, "h");
  EXPECT_NE(m.find("Subject: =?UTF-8?B?"), std::string::npos);
  EXPECT_EQ(m.find("\r\nBcc:"), std::string::npos);  // the CRLF was dropped, Bcc stays in the text
  // Each encoded word holds whole characters: decodable alone.
  EXPECT_NE(m.find("?=\r\n =?UTF-8?B?"), std::string::npos);
}

TEST(MailText, OnlyPlainAddresses) {
  EXPECT_TRUE(plain_address("alice@example.org"));
  EXPECT_TRUE(plain_address("a.b+c@x.y"));
  EXPECT_FALSE(plain_address("alice"));
  EXPECT_FALSE(plain_address("alice@x.org, bob@y.org"));
  EXPECT_FALSE(plain_address("Alice <alice@x.org>"));
  EXPECT_FALSE(plain_address("a@b@c"));
  EXPECT_FALSE(plain_address("a@b\r\nBcc: x@y"));
  EXPECT_FALSE(plain_address("@x.org"));
}

}  // namespace
}  // namespace gpuscope
