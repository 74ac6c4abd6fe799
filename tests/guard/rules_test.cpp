// guard's rules file: the defaults (Job Defense Shield's published steps), a full file read
// back, and every kind of mistake refused with the line it is on.
#include "guard/rules.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace gpuscope::guard {
namespace {

Rules rules_of(const std::string& text) {
  return parse_rules(parse_yaml(text, "guard.yaml"));
}

std::string error_of(const std::string& text) {
  try {
    rules_of(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(GuardRules, AnEmptyMappingGivesTheDefaults) {
  const Rules rules = rules_of("enforce: false\n");
  EXPECT_FALSE(rules.enforce);
  EXPECT_EQ(rules.idle.steps.first_warning_s, 3600);
  EXPECT_EQ(rules.idle.steps.second_warning_s, 6300);
  EXPECT_EQ(rules.idle.steps.cancel_s, 7200);
  EXPECT_EQ(rules.idle.activity_pct, 0);
  EXPECT_EQ(rules.interval_s, 300);
  EXPECT_FALSE(rules.idle.interactive_steps.cancel_s);
  EXPECT_TRUE(rules.notify.stdout_json);
  EXPECT_FALSE(rules.notify.mail);
}

TEST(GuardRules, AFullFileIsReadBack) {
  const Rules rules = rules_of(R"(
enforce: true
cluster: della
state: /tmp/guard.db
interval: 10m
sample_interval: 15s
max_cancels_per_cycle: 5
idle:
  activity_pct: 1
  gpu_share: 0.75
  first_warning: 1h
  second_warning: never
  cancel: 3h
  notice: 20m
  min_age: 30m
  partitions: [gpu, llm]
  exempt: {users: [alice], accounts: [ops], qos: [debug]}
  interactive:
    names: [interactive, sys/dashboard, jupyter]
    first_warning: 2h
    cancel: 8h
  templates: {cancel: /etc/gpuscope/cancel.txt}
too_large: {memory_share: 0.2, activity_pct: 20, after: 2h}
health:
  xids: [79, 48]
  row_remap_pending: true
  max_drained_share: 0.05
notify:
  stdout: false
  mail: {smtp: "smtps://mail.example.org:465", from: gpuscope@example.org, domain: example.org}
  webhook: {url_file: /etc/gpuscope/hook}
  admins: [hpc@example.org]
  digest_hour: -1
)");
  EXPECT_TRUE(rules.enforce);
  EXPECT_EQ(rules.cluster, "della");
  EXPECT_EQ(rules.interval_s, 600);
  EXPECT_EQ(rules.sample_interval_s, 15);
  EXPECT_EQ(rules.max_cancels_per_cycle, 5u);
  EXPECT_DOUBLE_EQ(rules.idle.gpu_share, 0.75);
  EXPECT_FALSE(rules.idle.steps.second_warning_s);
  EXPECT_EQ(rules.idle.steps.cancel_s, 10800);
  EXPECT_EQ(rules.idle.notice_s, 1200);
  EXPECT_EQ(rules.idle.exempt.users, std::vector<std::string>{"alice"});
  EXPECT_EQ(rules.idle.interactive_names.size(), 3u);
  EXPECT_EQ(rules.idle.interactive_steps.cancel_s, 8 * 3600);
  EXPECT_EQ(rules.idle.cancel_template, "/etc/gpuscope/cancel.txt");
  EXPECT_EQ(rules.too_large.after_s, 7200);
  EXPECT_EQ(rules.health.xids, (std::vector<unsigned>{79, 48}));
  EXPECT_TRUE(rules.health.row_remap_pending);
  ASSERT_TRUE(rules.notify.mail);
  EXPECT_EQ(rules.notify.mail->smtp_url, "smtps://mail.example.org:465");
  ASSERT_TRUE(rules.notify.webhook);
  EXPECT_EQ(rules.notify.digest_hour, -1);
  EXPECT_FALSE(rules.notify.stdout_json);
}

TEST(GuardRules, MistakesNameTheirLine) {
  EXPECT_NE(error_of("idle:\n  cancle: 2h\n").find("guard.yaml line 2: 'idle.cancle' is not a key"),
            std::string::npos);
  EXPECT_NE(error_of("enforce: yes\n").find("line 1: 'enforce' must be true or false"),
            std::string::npos);
  EXPECT_NE(error_of("idle:\n  activity_pct: 150\n").find("line 2: 'idle.activity_pct' must be"),
            std::string::npos);
  EXPECT_NE(error_of("idle:\n  cancel: soon\n").find("must be a duration"), std::string::npos);
  EXPECT_NE(error_of("idle:\n  first_warning: 3h\n  cancel: 2h\n").find("in order"),
            std::string::npos);
  EXPECT_NE(error_of("health:\n  xids: [79, abc]\n").find("'abc', which is not an Xid"),
            std::string::npos);
  EXPECT_NE(error_of("notify:\n  mail: {from: a@b}\n").find("needs one of smtp"),
            std::string::npos);
  EXPECT_NE(error_of("notify:\n  mail: {smtp: 'http://x', from: a@b}\n").find("smtp://"),
            std::string::npos);
  EXPECT_NE(error_of("idle: 5\n").find("'idle' is not a mapping"), std::string::npos);
  EXPECT_NE(error_of("- a\n- b\n").find("the file is not a mapping"), std::string::npos);
  EXPECT_NE(error_of("sample_interval: 40m\n").find("at most half"), std::string::npos);
  // Numbers past any range, NaN and infinity are refused as numbers, by line.
  EXPECT_NE(error_of("idle:\n  activity_pct: 1e999\n").find("line 2: 'idle.activity_pct' must be"),
            std::string::npos);
  EXPECT_NE(error_of("idle:\n  gpu_share: .nan\n").find("'idle.gpu_share' must be"),
            std::string::npos);
  EXPECT_NE(error_of("max_cancels_per_cycle: 99999999999999999999\n").find("must be a whole"),
            std::string::npos);
}

TEST(GuardRules, DurationsInEveryForm) {
  EXPECT_EQ(parse_duration_s("90m"), 5400);
  EXPECT_EQ(parse_duration_s("1h30m"), 5400);
  EXPECT_EQ(parse_duration_s("2d"), 172800);
  EXPECT_EQ(parse_duration_s("300"), 300);
  EXPECT_EQ(parse_duration_s("45s"), 45);
  EXPECT_FALSE(parse_duration_s(""));
  EXPECT_FALSE(parse_duration_s("m"));
  EXPECT_FALSE(parse_duration_s("5 min"));
  EXPECT_FALSE(parse_duration_s("-5m"));
}

}  // namespace
}  // namespace gpuscope::guard

namespace gpuscope::guard {
namespace {

TEST(GuardRules, TheShippedExampleIsValid) {
  const Rules rules = read_rules(std::string(GPUSCOPE_SOURCE_DIR) + "/deploy/guard/guard.yaml");
  EXPECT_FALSE(rules.enforce);
  EXPECT_EQ(rules.idle.steps.cancel_s, 7200);
  EXPECT_FALSE(rules.idle.interactive_steps.second_warning_s);
  EXPECT_EQ(rules.idle.partitions, std::vector<std::string>{"gpu"});
}

}  // namespace
}  // namespace gpuscope::guard
