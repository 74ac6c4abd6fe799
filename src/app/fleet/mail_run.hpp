// `gpuscope mail`: gpuscope as SLURM's MailProg (docs/fleet.md, "The end-of-job mail"). slurmctld
// runs it as SlurmUser on the controller with `-s SUBJECT RECIPIENT`; it runs the site's real
// mail program (mail.conf) with the same arguments, never through a shell, and gives it the body
// it was given plus, in a job's END and FAIL mails, the job's GPU summary. Whatever gpuscope's
// part does (the server down, sacct failing, too slow), the mail is sent.
#pragma once

#include <string>
#include <vector>

#include "app/fleet/mail_message.hpp"
#include "util/environment.hpp"

namespace gpuscope::app {

struct MailRun {
  std::vector<std::string> arguments;  // MailProg's, as slurmctld gave them
};

// Sends the mail; the mail program's exit status (1 when it could not be started).
int run_mail(const MailRun& o);

// The configuration: $GPUSCOPE_MAIL_CONFIG (which must exist), else /etc/gpuscope/mail.conf
// when it exists, else the defaults (the first mail program installed). Throws Error for a file
// that cannot be read or is wrong.
MailConfig load_mail_config(const util::EnvLookup& env,
                            const std::string& system_file = "/etc/gpuscope/mail.conf");

// What gpuscope adds to a mail.
struct MailSummary {
  enum class Kind {
    None,     // not an end-of-job mail, or a job without GPUs: the mail goes as it came
    Summary,  // `text` is the job's GPU summary
    Failed,   // `text` says why there is none
  };
  Kind kind = Kind::None;
  std::string text;
};

// The body sent: `original` as it came, then (after a blank line) the summary or the line
// saying why there is none.
std::string mail_body(const std::string& original, const std::string& job_id,
                      const MailSummary& summary);

}  // namespace gpuscope::app
