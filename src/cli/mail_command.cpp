// `gpuscope mail`: gpuscope as SLURM's MailProg (docs/fleet.md, "The end-of-job mail"). It takes
// the mail program's arguments as slurmctld gives them (`-s SUBJECT RECIPIENT`), untouched; the
// work is app::run_mail.
#include <memory>

#include "app/fleet/mail_run.hpp"
#include "cli/command.hpp"

namespace gpuscope::cli {

Command add_mail_command(CLI::App& parent) {
  auto o = std::make_shared<app::MailRun>();
  CLI::App* app = parent.add_subcommand(
      "mail",
      "SLURM's MailProg: sends the mail through the site's mail program (/etc/gpuscope/mail.conf) "
      "with the job's GPU summary added to its END and FAIL mails");
  // Everything from the first argument on is the mail program's, as slurmctld gave it.
  app->prefix_command();
  return {app, [o, app] {
            o->arguments = app->remaining();
            return app::run_mail(*o);
          }};
}

}  // namespace gpuscope::cli
