#include "app/fleet/mail_run.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "app/fleet/fleet_read.hpp"
#include "app/fleet/fleet_run.hpp"
#include "app/job/job_server.hpp"
#include "app/job/job_window.hpp"
#include "core/error.hpp"
#include "fleet/sacct_jobs.hpp"
#include "report/job_mail.hpp"
#include "util/small_file.hpp"
#include "util/visible_text.hpp"

extern char** environ;

namespace gpuscope::app {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxBody = 4 << 20;

bool file_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

int remaining_ms(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<long long>(0, left));
}

// Up to `limit` bytes of `fd` until its end or `deadline`.
std::string read_until(int fd, Clock::time_point deadline, std::size_t limit, bool& ended) {
  std::string out;
  ended = false;
  char buffer[65536];
  while (out.size() < limit) {
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, remaining_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return out;
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, std::min(static_cast<std::size_t>(n), limit - out.size()));
  }
  ended = true;
  return out;
}

// The body slurmctld gave (it gives none; a caller by hand may), never waiting long for it.
std::string read_body() {
  if (isatty(STDIN_FILENO)) return {};
  bool ended = false;
  return read_until(STDIN_FILENO, Clock::now() + std::chrono::seconds(5), kMaxBody, ended);
}

FleetOptions fleet_options(const MailConfig& c) {
  FleetOptions f;
  f.config = c.prometheus_config;
  f.sacct = c.sacct;
  f.region = c.region;
  f.carbon_intensity = c.carbon_intensity;
  f.pue = c.pue;
  return f;
}

// The job as SLURM's accounting has it, asked until it has ended there (slurmctld may mail
// before slurmdbd has the end) or `deadline` passes; nullopt for a job without GPUs.
std::optional<SiteJob> ended_job(const FleetOptions& f, const std::string& job_id,
                                 Clock::time_point deadline) {
  for (;;) {
    const auto limit = std::chrono::seconds(std::max(1, remaining_ms(deadline) / 1000));
    const std::string output =
        run_sacct(sacct_program(f.sacct), fleet::sacct_one_job_arguments(job_id), limit);
    fleet::SacctRead read = fleet::read_sacct_jobs(output, fleet_now_ms());
    const auto job = std::find_if(read.jobs.begin(), read.jobs.end(),
                                  [&](const SiteJob& j) { return j.id == job_id; });
    if (job == read.jobs.end() && read.without_gpus > 0) return std::nullopt;
    const bool late = remaining_ms(deadline) < 1000;
    if (job != read.jobs.end() && (!job->running || late)) return *job;
    if (late) throw Error(fmt::format("SLURM's accounting has no record of job {} yet", job_id));
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

// gpuscope's part, in a child process the caller may kill: the job's row as `gpuscope job ID
// --row` gives it, once sacct has its end and the server its last scrapes.
MailSummary summarise(const MailConfig& c, const std::string& job_id) {
  const FleetOptions f = fleet_options(c);
  // Most of the time for sacct; the server's queries are quick once the job is known.
  const auto sacct_deadline = Clock::now() + c.timeout * 6 / 10;
  const std::optional<SiteJob> job = ended_job(f, job_id, sacct_deadline);
  if (!job) return {};
  const std::int64_t wait_ms = job->end_ms + c.settle.count() - fleet_now_ms();
  if (wait_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(
        std::min<std::int64_t>(wait_ms, remaining_ms(sacct_deadline + c.timeout * 3 / 10))));
  }
  const auto source = open_job_server(std::nullopt, f.config);
  return {MailSummary::Kind::Summary,
          report::job_mail_summary(site_row_of_job(f, *source, job_id))};
}

[[noreturn]] void summary_child(int fd, const MailConfig& c, const std::string& job_id) {
  setpgid(0, 0);  // so the parent can stop sacct with it
  MailSummary s;
  try {
    s = summarise(c, job_id);
  } catch (const Error& e) {
    // The mail says what failed; slurmctld's log (stderr) gets the whole message.
    const std::string what =
        e.reason().empty() ? e.summary() : e.summary() + " (" + e.reason() + ")";
    s = {MailSummary::Kind::Failed, what + "\n" + e.what()};
  } catch (const std::exception& e) {
    s = {MailSummary::Kind::Failed, e.what()};
  }
  const char kind = s.kind == MailSummary::Kind::Summary  ? 'S'
                    : s.kind == MailSummary::Kind::Failed ? 'F'
                                                          : 'N';
  std::string out = kind + s.text;
  for (std::size_t done = 0; done < out.size();) {
    const ssize_t n = write(fd, out.data() + done, out.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  _exit(0);
}

// The summary, or why there is none, within the configuration's time.
MailSummary summary_within(const MailConfig& c, const std::string& job_id) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return {MailSummary::Kind::Failed, std::strerror(errno)};
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return {MailSummary::Kind::Failed, std::strerror(errno)};
  }
  if (pid == 0) {
    close(fds[0]);
    summary_child(fds[1], c, job_id);
  }
  close(fds[1]);
  bool ended = false;
  const std::string said = read_until(fds[0], Clock::now() + c.timeout, kMaxBody, ended);
  close(fds[0]);
  if (!ended) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!ended) {
    const auto s = std::chrono::duration_cast<std::chrono::seconds>(c.timeout).count();
    return {MailSummary::Kind::Failed, fmt::format("gpuscope did not have it within {} s", s)};
  }
  if (said.empty()) return {MailSummary::Kind::Failed, "gpuscope's summary stopped"};
  const MailSummary::Kind kind = said[0] == 'S'   ? MailSummary::Kind::Summary
                                 : said[0] == 'F' ? MailSummary::Kind::Failed
                                                  : MailSummary::Kind::None;
  return {kind, said.substr(1)};
}

// The mail program's arguments and what it reads, for the interface it has.
std::vector<std::string> mail_argv(const MailConfig& c, const SlurmMail& mail) {
  std::vector<std::string> argv{c.mail_program};
  argv.insert(argv.end(), c.mail_arguments.begin(), c.mail_arguments.end());
  if (c.interface == MailInterface::Sendmail) {
    argv.push_back("-i");  // a line of "." is text, not the end of the message
    argv.push_back("--");
    argv.insert(argv.end(), mail.recipients.begin(), mail.recipients.end());
  } else {
    argv.insert(argv.end(), mail.arguments.begin(), mail.arguments.end());
  }
  return argv;
}

// Runs the mail program (execv: no shell, this process's environment) with `input` on its
// standard input; its exit status as a shell reports it, 1 when it could not be started.
int send_mail(const MailConfig& c, const SlurmMail& mail, const std::string& body) {
  const std::string input =
      c.interface == MailInterface::Sendmail ? sendmail_message(mail, body) : body;
  std::vector<std::string> argv = mail_argv(c, mail);
  std::vector<char*> pointers;
  for (auto& a : argv) pointers.push_back(a.data());
  pointers.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    fmt::print(stderr, "gpuscope: error: cannot make a pipe ({})\n", std::strerror(errno));
    return 1;
  }
  const std::string failed = fmt::format("gpuscope: error: cannot run the mail program {} (",
                                         util::visible(c.mail_program));
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[0], STDIN_FILENO);  // dup2 clears close-on-exec on the copy
    execv(c.mail_program.c_str(), pointers.data());
    const std::string why = failed + std::strerror(errno) + "); set mail_program in mail.conf\n";
    (void)!write(STDERR_FILENO, why.data(), why.size());
    _exit(127);
  }
  close(fds[0]);
  if (pid < 0) {
    close(fds[1]);
    fmt::print(stderr, "{}{})\n", failed, std::strerror(errno));
    return 1;
  }
  signal(SIGPIPE, SIG_IGN);  // a mail program that stops reading fails, not gpuscope
  for (std::size_t done = 0; done < input.size();) {
    const ssize_t n = write(fds[1], input.data() + done, input.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  close(fds[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status) == 127 ? 1 : WEXITSTATUS(status);
}

}  // namespace

MailConfig load_mail_config(const util::EnvLookup& env, const std::string& system_file) {
  std::string path;
  if (const auto given = env("GPUSCOPE_MAIL_CONFIG"); given && !given->empty()) {
    path = *given;
  } else if (file_exists(system_file)) {
    path = system_file;
  }
  const std::string fallback = default_mail_program(file_exists);
  if (path.empty()) return parse_mail_config("", "", fallback);
  const auto text = util::read_small_file(path, 64 * 1024);
  if (!text) {
    throw Error(fmt::format("cannot read gpuscope mail's configuration {}", path),
                text.error().reason, "check GPUSCOPE_MAIL_CONFIG or /etc/gpuscope/mail.conf");
  }
  return parse_mail_config(*text, path, fallback);
}

std::string mail_body(const std::string& original, const std::string& job_id,
                      const MailSummary& summary) {
  if (summary.kind == MailSummary::Kind::None) return original;
  std::string body = original;
  if (!body.empty() && body.back() != '\n') body += '\n';
  if (!body.empty()) body += '\n';
  if (summary.kind == MailSummary::Kind::Summary) return body + summary.text;
  std::string why = summary.text.substr(0, summary.text.find('\n'));
  if (why.size() > 300) why = why.substr(0, 300) + "...";
  return body + report::job_mail_unavailable(job_id, why);
}

int run_mail(const MailRun& o) {
  const util::EnvLookup env = util::process_environment();
  const SlurmMail mail = read_slurm_mail(o.arguments, env);
  const std::string original = read_body();
  MailConfig config;
  try {
    config = load_mail_config(env);
  } catch (const Error& e) {
    // The mail still goes, as it came, through the mail program a system has by default.
    fmt::print(stderr, "gpuscope: error: {}; the mail is sent without a GPU summary\n",
               util::visible(e.what()));
    config.mail_program = default_mail_program(file_exists);
    if (config.mail_program.empty()) return 1;
    config.interface = interface_of(config.mail_program);
    return send_mail(config, mail, original);
  }
  MailSummary summary;
  if (is_end_of_job(mail)) {
    summary = summary_within(config, mail.job_id);
  } else if (mail.array_summary && (mail.mail_type == "Ended" || mail.mail_type == "Failed")) {
    summary = {MailSummary::Kind::Failed,
               "this mail sums up an array; gpuscope jobs gives each task's figures"};
  }
  if (summary.kind == MailSummary::Kind::Failed) {
    const auto newline = summary.text.find('\n');
    const std::string why =
        newline == std::string::npos ? summary.text : summary.text.substr(newline + 1);
    fmt::print(stderr, "gpuscope: note: no GPU summary of job {}: {}\n", util::visible(mail.job_id),
               util::visible(why));
  }
  return send_mail(config, mail, mail_body(original, mail.job_id, summary));
}

}  // namespace gpuscope::app
