// guard's rules file (docs/guard.md): what counts as an idle job, when it is warned and
// cancelled, who is exempt, when a GPU is too large for its job, which faults drain a node, and
// where notices go. Read from YAML (core/yaml_document.hpp); every key is known or an error that
// names its line, every value is checked, nothing is silently ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/yaml_document.hpp"

namespace gpuscope::guard {

// Who a rule leaves alone.
struct Exemptions {
  std::vector<std::string> users;
  std::vector<std::string> accounts;
  std::vector<std::string> partitions;
  std::vector<std::string> qos;
};

// When an idle job is warned and cancelled: minutes of continuous idleness (docs/guard.md,
// "How idleness is measured"). Absent: that step is not taken.
struct Escalation {
  std::optional<std::int64_t> first_warning_s;
  std::optional<std::int64_t> second_warning_s;
  std::optional<std::int64_t> cancel_s;
};

struct IdleRule {
  bool enabled = true;
  double activity_pct = 0;  // a sample at or below this GPU utilization is idle
  double gpu_share = 1;     // a job is idle when at least this share of its GPUs are
  // Princeton's Job Defense Shield's published defaults: warnings at 60 and 105 minutes,
  // cancelled at 120.
  Escalation steps{3600, 6300, 7200};
  std::int64_t min_age_s = 3600;        // younger jobs are left alone
  std::int64_t notice_s = 900;          // a cancel comes at least this long after the last warning
  std::vector<std::string> partitions;  // only these (empty: every partition)
  Exemptions exempt;
  // Interactive jobs: salloc and srun allocations (no batch script) and jobs whose name begins
  // with one of these (Open OnDemand's "sys/dashboard", "interactive"). Their own steps.
  std::vector<std::string> interactive_names{"interactive", "sys/dashboard"};
  Escalation interactive_steps{3600, std::nullopt, std::nullopt};  // warned, never cancelled
  // Message templates (files); empty: the built-in text.
  std::string first_warning_template;
  std::string second_warning_template;
  std::string cancel_template;
};

struct TooLargeRule {
  bool enabled = true;
  double memory_share = 0.25;   // peak memory at most this share of the GPU's
  double activity_pct = 25;     // and mean activity at most this
  std::int64_t after_s = 3600;  // judged once the job has run this long
  std::string template_file;
};

struct HealthRule {
  bool enabled = true;
  // NVIDIA's Xids that need a GPU reset or a node reboot (docs/guard.md cites the catalogue).
  std::vector<unsigned> xids{48, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140};
  bool uncorrected_ecc = true;
  bool row_remap_failure = true;
  bool row_remap_pending = false;  // pending remaps clear at the next reset: advice by default
  bool lost_gpu = true;
  double max_drained_share = 0.1;  // never more of a partition's nodes drained at once
  // gpuscope health-check: the level of `dcgmi diag -r N` to run where DCGM is installed
  // (1: seconds, the software and deployment checks; 0: none).
  int dcgm_diag_level = 0;
};

struct MailSettings {
  std::string smtp_url;  // smtp://host:25 (STARTTLS required) or smtps://host:465
  std::string program;   // else a sendmail-like program: `program -t` reads the message
  std::string from;
  std::string domain;       // a user's address is user@domain
  std::string credentials;  // a file "user:password" (mode 0600), for SMTP AUTH
  std::string ca_file;      // the CA of the SMTP server, else the system's
};

struct WebhookSettings {
  std::string url_file;    // the URL is a secret (Slack's, Mattermost's): kept in a file
  std::string token_file;  // optional bearer token
  std::string ca_file;
};

struct NotifySettings {
  bool stdout_json = true;  // JSON lines on stdout, for log shippers
  std::optional<MailSettings> mail;
  std::optional<WebhookSettings> webhook;
  std::vector<std::string> admins;  // addresses of the admins: drains, the digest, copies
  bool copy_warnings_to_admins = false;
  std::size_t max_per_user_per_day = 20;  // notices to one person; past it they wait
  int digest_hour = 8;                    // local hour of the admins' daily digest (-1: none)
};

struct Rules {
  std::string path;      // the file read, for messages
  bool enforce = false;  // false: a dry run, whatever the command line says
  std::string cluster;   // named in notices
  std::string state = "/var/lib/gpuscope/guard.db";
  std::string audit_log;  // JSON lines of every action, beside the state's own audit table
  std::int64_t interval_s = 300;
  std::int64_t sample_interval_s = 30;  // the exporters' scrape interval: coverage is judged by it
  std::size_t max_cancels_per_cycle = 20;
  std::size_t max_drains_per_cycle = 2;
  IdleRule idle;
  TooLargeRule too_large;
  HealthRule health;
  NotifySettings notify;
};

// The rules in `document`. Throws Error::usage naming the file's line for an unknown key, a
// value of the wrong kind or out of range, or steps out of order.
Rules parse_rules(const YamlDocument& document);

// read_yaml_file then parse_rules.
Rules read_rules(const std::string& path);

// "90m", "2h", "300s", "1h30m" or a number of seconds, as rules and --interval take them.
std::optional<std::int64_t> parse_duration_s(const std::string& text);

}  // namespace gpuscope::guard
