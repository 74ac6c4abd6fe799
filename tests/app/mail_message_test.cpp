// gpuscope mail (SLURM's MailProg): the job and the kind of mail from slurmctld's subject and
// environment, whatever the job's name holds; mail.conf and what is wrong in it; the message a
// sendmail-like program is given, where no job name can forge a header; the body sent.
#include "app/fleet/mail_message.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "app/fleet/mail_run.hpp"
#include "core/error.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::app {
namespace {

util::EnvLookup env_of(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    const auto it = values.find(name);
    return it == values.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

TEST(MailSubject, ReadsAnEndMail) {
  const auto s = parse_slurm_subject(
      "Slurm Job_id=123 Name=train Ended, Run time 00:01:02, COMPLETED, ExitCode 0");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->job_id, "123");
  EXPECT_EQ(s->shown_id, "123");
  EXPECT_EQ(s->name, "train");
  EXPECT_EQ(s->mail_type, "Ended");
  EXPECT_FALSE(s->array_summary);
}

TEST(MailSubject, ReadsEveryKindOfMail) {
  const std::pair<const char*, const char*> cases[] = {
      {"Slurm Job_id=7 Name=a Began, Queued time 00:00:01", "Began"},
      {"Slurm Job_id=7 Name=a Failed, Run time 00:00:04, FAILED, ExitCode 3", "Failed"},
      {"Slurm Job_id=7 Name=a Requeued, Run time 00:00:04", "Requeued"},
      {"Slurm Job_id=7 Name=a Reached 90% of time limit, Run time 00:09:00",
       "Reached 90% of time limit"},
      {"Slurm Job_id=7 Name=a Ended, Run time 00:00:04, CANCELLED", "Ended"},
      {"Slurm Job_id=7 Name=a StageOut/Teardown time 00:00:01", "StageOut/Teardown"},
  };
  for (const auto& [subject, type] : cases) {
    const auto s = parse_slurm_subject(subject);
    ASSERT_TRUE(s) << subject;
    EXPECT_EQ(s->mail_type, type) << subject;
    EXPECT_EQ(s->name, "a") << subject;
  }
}

TEST(MailSubject, HostileNamesDoNotFoolIt) {
  const auto s = parse_slurm_subject(
      "Slurm Job_id=99 Name=x Ended, y Began, 'quoted' \"nämé\" Failed, Run time 00:00:04, "
      "FAILED, ExitCode 1");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->name, "x Ended, y Began, 'quoted' \"nämé\"");
  EXPECT_EQ(s->mail_type, "Failed");
  const auto spaces = parse_slurm_subject("Slurm Job_id=5 Name=  two  spaces   Began");
  ASSERT_TRUE(spaces);
  EXPECT_EQ(spaces->name, "  two  spaces  ");
  EXPECT_EQ(spaces->mail_type, "Began");
  const auto empty = parse_slurm_subject("Slurm Job_id=5 Name= Ended, Run time 00:00:01");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->name, "");
  EXPECT_EQ(empty->mail_type, "Ended");
  const auto endless = parse_slurm_subject("Slurm Job_id=5 Name=Ended");
  ASSERT_TRUE(endless);
  EXPECT_EQ(endless->mail_type, "");  // the name alone: no type follows it
}

TEST(MailSubject, ArrayTasksAndSummaries) {
  const auto task = parse_slurm_subject(
      "Slurm Array Task Job_id=123_4 (127) Name=sweep Ended, Run time 00:00:06, COMPLETED, "
      "ExitCode 0");
  ASSERT_TRUE(task);
  EXPECT_EQ(task->job_id, "127");
  EXPECT_EQ(task->shown_id, "123_4");
  EXPECT_FALSE(task->array_summary);
  const auto summary = parse_slurm_subject(
      "Slurm Array Summary Job_id=123_* (123) Name=sweep Ended, Mixed, ExitCode [0-1]");
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->job_id, "123");
  EXPECT_TRUE(summary->array_summary);
  EXPECT_EQ(summary->mail_type, "Ended");
}

TEST(MailSubject, RefusesWhatIsNotASlurmSubject) {
  for (const char* s : {"", "hello", "Slurm Job_id=abc Name=x Ended", "Slurm Job_id=12",
                        "Slurm Array Task Job_id=1_2 Name=x Ended", "Slurm Job_id=1;rm Name=x"}) {
    EXPECT_FALSE(parse_slurm_subject(s)) << s;
  }
}

TEST(SlurmMailArguments, TheEnvironmentWinsOverTheSubject) {
  const auto mail = read_slurm_mail(
      {"-s", "Slurm Job_id=1 Name=a Ended, Run time 00:00:01, COMPLETED, ExitCode 0",
       "someone@example.org"},
      env_of({{"SLURM_JOB_ID", "2"}, {"SLURM_JOB_MAIL_TYPE", "Failed"}}));
  EXPECT_EQ(mail.job_id, "2");
  EXPECT_EQ(mail.mail_type, "Failed");
  EXPECT_EQ(mail.recipients, std::vector<std::string>{"someone@example.org"});
  EXPECT_EQ(mail.arguments.size(), 3U);
  EXPECT_TRUE(is_end_of_job(mail));
}

TEST(SlurmMailArguments, WithoutTheEnvironmentTheSubjectSays) {
  const auto mail = read_slurm_mail(
      {"-s", "Slurm Job_id=3 Name=a Began, Queued time 00:00:01", "a@example.org", "b@example.org"},
      env_of({{"SLURM_JOB_ID", "not a number"}}));
  EXPECT_EQ(mail.job_id, "3");
  EXPECT_EQ(mail.mail_type, "Began");
  EXPECT_EQ(mail.recipients.size(), 2U);
  EXPECT_FALSE(is_end_of_job(mail));
}

TEST(SlurmMailArguments, NoJobOrAnArraySummaryIsNoEndOfJobMail) {
  EXPECT_FALSE(is_end_of_job(read_slurm_mail({"-s", "hello", "a@b"}, env_of({}))));
  EXPECT_FALSE(is_end_of_job(read_slurm_mail(
      {"-s", "Slurm Array Summary Job_id=1_* (1) Name=s Ended, COMPLETED, ExitCode [0-0]", "a@b"},
      env_of({}))));
}

TEST(MailConfigFile, ReadsItsKeys) {
  const auto c = parse_mail_config(
      "# the site's\nmail_program = /usr/bin/msmtp\nmail_arguments = -C /etc/gpuscope/msmtprc\n"
      "timeout = 15s\nprometheus_config = /etc/gpuscope/prometheus.conf\nregion = DE\npue = 1.2\n"
      "  \n",
      "mail.conf", "/usr/bin/mail");
  EXPECT_EQ(c.mail_program, "/usr/bin/msmtp");
  EXPECT_EQ(c.interface, MailInterface::Sendmail);
  EXPECT_EQ(c.mail_arguments, (std::vector<std::string>{"-C", "/etc/gpuscope/msmtprc"}));
  EXPECT_EQ(c.timeout, std::chrono::seconds(15));
  EXPECT_EQ(c.prometheus_config, "/etc/gpuscope/prometheus.conf");
  EXPECT_EQ(c.region, "DE");
  EXPECT_DOUBLE_EQ(c.pue, 1.2);
}

TEST(MailConfigFile, DefaultsToTheInstalledMailProgram) {
  const auto c = parse_mail_config("", "", "/usr/bin/mail.mailutils");
  EXPECT_EQ(c.mail_program, "/usr/bin/mail.mailutils");
  EXPECT_EQ(c.interface, MailInterface::Mail);
  EXPECT_EQ(c.timeout, std::chrono::seconds(20));
  EXPECT_EQ(parse_mail_config("mail_interface = mail\nmail_program = /usr/sbin/sendmail", "f", "")
                .interface,
            MailInterface::Mail);
  EXPECT_EQ(default_mail_program([](const std::string& p) { return p == "/usr/bin/mail"; }),
            "/usr/bin/mail");
  EXPECT_EQ(default_mail_program([](const std::string&) { return false; }), "");
}

TEST(MailConfigFile, SaysWhatIsWrongAndWhere) {
  const std::pair<const char*, const char*> cases[] = {
      {"mail_program = mail", "mail.conf:1: mail_program 'mail' is not an absolute path"},
      {"# x\nmailprogram = /usr/bin/mail", "mail.conf:2: unknown key 'mailprogram'"},
      {"timeout = 5 minutes", "mail.conf:1: timeout '5 minutes' is not a time"},
      {"timeout = 300s", "is not a time from 1s to 100s"},
      {"pue = 0.5", "mail.conf:1: pue '0.5' is not a number between 1 and 5"},
      {"mail_interface = smtp", "is neither mail nor sendmail"},
      {"just words", "mail.conf:1: 'just words' is not a key = value line"},
      {"", "names no mail_program and no mail program is installed"},
  };
  for (const auto& [text, said] : cases) {
    try {
      parse_mail_config(text, "mail.conf", "");
      ADD_FAILURE() << "no error for " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(said), std::string::npos) << e.what();
    }
  }
}

TEST(MailConfigFile, TheFileNamedByTheEnvironmentMustBeThere) {
  testing::TempDir dir;
  const std::string path = dir.file("mail.conf");
  EXPECT_THROW(load_mail_config(env_of({{"GPUSCOPE_MAIL_CONFIG", path}})), Error);
  std::ofstream(path) << "mail_program = /opt/mail\n";
  EXPECT_EQ(load_mail_config(env_of({{"GPUSCOPE_MAIL_CONFIG", path}})).mail_program, "/opt/mail");
  EXPECT_EQ(load_mail_config(env_of({}), path).path, path);
}

TEST(SendmailMessage, NoNameCanForgeAHeader) {
  SlurmMail mail;
  mail.subject = "Slurm Job_id=1 Name=x\r\nBcc: victim@example.org Ended";
  mail.recipients = {"someone@example.org"};
  const std::string m = sendmail_message(mail, "body");
  EXPECT_EQ(m.find("\nBcc:"), std::string::npos) << m;
  EXPECT_EQ(m.rfind("To: someone@example.org\nSubject: Slurm Job_id=1 Name=x  Bcc: victim", 0), 0U)
      << m;
  EXPECT_NE(m.find("Content-Type: text/plain; charset=UTF-8\n"), std::string::npos);
  EXPECT_EQ(m.substr(m.size() - 6), "\nbody\n");
}

TEST(SendmailMessage, NonAsciiSubjectsAreEncodedWords) {
  SlurmMail mail;
  mail.subject =
      "Slurm Job_id=1 Name=idle 'quoted' nämé Ended, Run time 00:00:12, COMPLETED, "
      "ExitCode 0";
  mail.recipients = {"a@example.org", "b@example.org"};
  const std::string m = sendmail_message(mail, "");
  EXPECT_NE(m.find("To: a@example.org, b@example.org\n"), std::string::npos);
  EXPECT_NE(m.find("Subject: =?UTF-8?B?"), std::string::npos) << m;
  EXPECT_NE(m.find("?=\n =?UTF-8?B?"), std::string::npos) << m;  // folded, each word short
  EXPECT_EQ(m.find("nämé"), std::string::npos);
}

TEST(MailBody, TheSummaryFollowsTheBodyAndNothingElseChanges) {
  EXPECT_EQ(mail_body("", "1", {}), "");
  EXPECT_EQ(mail_body("as it came", "1", {}), "as it came");
  EXPECT_EQ(mail_body("", "1", {MailSummary::Kind::Summary, "GPU summary\n"}), "GPU summary\n");
  EXPECT_EQ(mail_body("text", "1", {MailSummary::Kind::Summary, "GPU summary\n"}),
            "text\n\nGPU summary\n");
  EXPECT_EQ(mail_body("", "7", {MailSummary::Kind::Failed, "cannot reach the server\nmore"}),
            "(No GPU summary of job 7: cannot reach the server.)\n");
}

}  // namespace
}  // namespace gpuscope::app
