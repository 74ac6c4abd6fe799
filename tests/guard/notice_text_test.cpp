// guard's notices: templates filled in one pass, hostile values (a newline that would start a
// mail header, a value that looks like a placeholder, very long names) made harmless, unknown
// placeholders refused by line, and text escaped for Slack and Mattermost.
#include "guard/notice_text.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace gpuscope::guard {
namespace {

TEST(NoticeText, TheBuiltInTemplatesFillIn) {
  for (const char* kind : {"first_warning", "second_warning", "cancel", "advice", "drain"}) {
    const Notice n = render_notice(builtin_notice_template(kind), {{"user", "alice"},
                                                                   {"job", "123"},
                                                                   {"node", "n3"},
                                                                   {"cluster", "della"},
                                                                   {"reason", "Xid 79"}});
    EXPECT_NE(n.subject.find("[della]"), std::string::npos) << kind;
    EXPECT_EQ(n.subject.find("{{"), std::string::npos) << kind;
    EXPECT_EQ(n.body.find("{{"), std::string::npos) << kind;
  }
}

TEST(NoticeText, HostileValuesStayValues) {
  const NoticeTemplate t =
      parse_notice_template("Subject: job {{job_name}}\nName: {{job_name}}\n", "t.txt");
  const Notice n = render_notice(t, {{"job_name", "x\r\nBcc: everyone@example.org {{user}}"}});
  EXPECT_EQ(n.subject, "job xBcc: everyone@example.org {{user}}");  // one line, not refilled
  EXPECT_EQ(n.body.find('\r'), std::string::npos);
  EXPECT_EQ(n.body, "Name: xBcc: everyone@example.org {{user}}\n");
}

TEST(NoticeText, LongValuesAreCutOnACharacter) {
  std::string name;
  for (int i = 0; i < 150; ++i) name += "é";  // two bytes each
  const std::string cut = clean_value(name);
  EXPECT_EQ(cut.size(), 200u);
  EXPECT_EQ(clean_value("x" + name).size(), 199u);  // never half a character
  EXPECT_EQ(clean_value("café"), "café");
}

TEST(NoticeText, UnknownPlaceholdersAreRefusedByLine) {
  try {
    parse_notice_template("Subject: hi\nline two\nthe {{jobid}} here\n", "/etc/gpuscope/w1.txt");
    FAIL() << "an unknown placeholder was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/etc/gpuscope/w1.txt line 3: {{jobid}} is not"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse_notice_template("the {{job\n}}", "t"), Error);
}

TEST(NoticeText, ChatTextIsEscaped) {
  EXPECT_EQ(chat_escape("<!channel> a & b > c"), "&lt;!channel&gt; a &amp; b &gt; c");
}

}  // namespace
}  // namespace gpuscope::guard
