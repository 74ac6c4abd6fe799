// What `gpuscope mail` is given when slurmctld runs it as MailProg, and how it is configured:
// the mail's arguments (`-s SUBJECT RECIPIENT...`), the job and the kind of mail from SLURM's
// environment or its subject, the configuration file (/etc/gpuscope/mail.conf), and the message
// a sendmail-like program (msmtp) is given. Pure text handling (docs/fleet.md, "The end-of-job
// mail (MailProg)").
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/environment.hpp"

namespace gpuscope::app {

// What the subject of a SLURM mail says: "Slurm Job_id=123 Name=train Ended, Run time
// 00:01:02, COMPLETED, ExitCode 0", "Slurm Array Task Job_id=123_4 (127) Name=...", "Slurm
// Array Summary Job_id=123_* (123) Name=...".
struct SlurmSubject {
  std::string job_id;          // the raw id (the array task's own), digits only
  std::string shown_id;        // 123, 123_4, 123_*
  std::string name;            // the job's name, as it is (spaces, quotes, any bytes)
  std::string mail_type;       // "Began", "Ended", "Failed", "Requeued", ...; "" when not one known
  bool array_summary = false;  // one mail for a whole array
};

// The subject's parts; nullopt when it is not a SLURM job mail's subject. The mail type is the
// last known one in the subject followed by its end or a comma, so a name holding " Ended, "
// does not fool it.
std::optional<SlurmSubject> parse_slurm_subject(std::string_view subject);

// The mail slurmctld asked for: its arguments, and what they and the environment say.
struct SlurmMail {
  std::vector<std::string> arguments;   // as given, for the site's mail program
  std::string subject;                  // the -s argument ("" without one)
  std::vector<std::string> recipients;  // the arguments after the options
  std::string job_id;                   // the raw id, digits; "" when neither source says
  std::string mail_type;                // SLURM_JOB_MAIL_TYPE, else the subject's
  bool array_summary = false;
};

// The mail of `arguments` (MailProg's, the program left out) under `env`: SLURM_JOB_ID and
// SLURM_JOB_MAIL_TYPE where slurmctld sets them (Slurm 21.08 and later), else the subject's.
SlurmMail read_slurm_mail(const std::vector<std::string>& arguments, const util::EnvLookup& env);

// Whether the mail is one a job's GPU summary belongs in: a job's own (not an array's summary)
// END or FAIL mail.
bool is_end_of_job(const SlurmMail& mail);

// How the site's mail program takes a mail.
enum class MailInterface {
  Mail,      // mail(1), mailx, mail.mailutils: `-s SUBJECT RECIPIENT...`, the body on stdin
  Sendmail,  // sendmail, msmtp: recipients as arguments, the whole message on stdin
};

// /etc/gpuscope/mail.conf (docs/fleet.md): `key = value` lines, # comments.
struct MailConfig {
  std::string mail_program;                 // the site's real one, an absolute path
  std::vector<std::string> mail_arguments;  // put before the recipients (msmtp's -C FILE)
  MailInterface interface = MailInterface::Mail;
  std::chrono::milliseconds timeout{20'000};  // gpuscope's part, all told
  std::chrono::milliseconds settle{0};        // waited after the job's end for the last scrapes
  std::optional<std::string> prometheus_config;
  std::string sacct = "sacct";
  std::optional<std::string> region;
  std::optional<double> carbon_intensity;
  double pue = 1;
  std::string path;  // the file read; "" when none
};

// The mail program used when the file names none: the first of /usr/bin/mail.mailutils,
// /usr/bin/mail, /usr/bin/mailx that `exists` says is there; "" when none.
std::string default_mail_program(bool (*exists)(const std::string&));

// The interface a program's name implies: sendmail and msmtp take whole messages.
MailInterface interface_of(const std::string& program);

// The file's settings. Throws Error naming `path` and the line of an unknown key, a line
// without `=`, a value that is not one, or a mail program that is not an absolute path.
// `fallback_program` stands when the file names none.
MailConfig parse_mail_config(const std::string& text, const std::string& path,
                             const std::string& fallback_program);

// The whole message for a sendmail-like program: To, Subject (RFC 2047 when not plain ASCII;
// control characters as spaces, so no header can be forged), MIME headers for UTF-8 text, then
// the body.
std::string sendmail_message(const SlurmMail& mail, const std::string& body);

}  // namespace gpuscope::app
