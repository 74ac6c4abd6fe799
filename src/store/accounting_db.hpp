// The accounting database (docs/fleet.md): every GPU job of the site summarised once, kept past
// the monitoring server's retention. One SQLite file in WAL mode, so readers (`jobs`, `usage`,
// the site report) are never blocked by an update, and its -wal and -shm files are kept so that
// users who may only read the file can open it. Tables: jobs (one row per job), job_gpus (one
// per job-GPU), usage_days (the jobs' sums per local day, user, account, partition and GPU
// model, kept with the rows in one transaction: `usage` over a year reads these), node_days (the
// GPUs' time per node and day: the site report's heatmap), updates (what each update asked for
// and how it ended) and meta (the schema's version).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/site_job.hpp"

namespace gpuscope::store {

inline constexpr int kAccountingSchema = 1;

// Which jobs: those that ended in [from, to), narrowed by the lists (empty: any).
struct JobQuery {
  std::optional<std::int64_t> from_ms;
  std::optional<std::int64_t> to_ms;
  std::vector<std::string> users;
  std::vector<std::string> accounts;
  std::vector<std::string> partitions;
  std::vector<std::string> states;
  std::vector<std::string> job_ids;
  std::size_t limit = 0;  // 0: all
  bool gpu_rows = false;  // also read each job's GPU rows
};

// One update as recorded.
struct UpdateRecord {
  std::int64_t id = 0;
  std::int64_t started_ms = 0;
  std::optional<std::int64_t> finished_ms;
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;
  std::optional<std::int64_t> covered_until_ms;  // every job that ended before this is in
  std::string status;                            // "running", "done", "failed"
  std::int64_t jobs_added = 0;
  std::string server;
  std::string message;
};

struct UtilizationBands {
  std::array<double, 10> gpu_hours{};
  std::array<std::int64_t, 10> jobs{};
  std::int64_t unknown = 0;
};

// A node's GPUs over one local day: how long jobs held them (GPU-seconds), the utilization
// times those seconds, and the most GPUs of the node one job held.
struct NodeDay {
  std::string node;
  std::string day;  // 2026-11-28
  double held_gpu_s = 0;
  double util_gpu_s = 0;
  int gpus = 0;
};

class AccountingDb {
 public:
  // For reading: the file must exist and be an accounting database. Throws Error saying what
  // is wrong: missing, no permission (with the file's mode, owner and group, and whom to ask),
  // not an accounting database, of a newer schema, damaged.
  static AccountingDb open_for_reading(const std::filesystem::path& path);
  // For an update: opened, or created (mode 0640 under the caller's umask) with its schema.
  // Waits up to `busy_ms` for another writer; throws Error when it still holds the file.
  static AccountingDb open_for_update(const std::filesystem::path& path, int busy_ms = 10'000);

  AccountingDb(AccountingDb&&) noexcept;
  AccountingDb& operator=(AccountingDb&&) noexcept;
  ~AccountingDb();

  const std::filesystem::path& path() const;

  // The end of the time covered: every job that ended before it is in (nullopt: no update
  // finished a batch yet).
  std::optional<std::int64_t> covered_until_ms();

  // Records an update that starts; returns its id.
  std::int64_t begin_update(std::int64_t from_ms, std::int64_t to_ms, const std::string& server);
  // Adds the jobs not in yet (by job id; the others are left as they are), their GPU rows and
  // their day sums, and moves the covered time to `covered_until_ms`, all in one transaction:
  // a failure leaves the file as it was. Returns how many jobs were new.
  std::size_t add_jobs(std::span<const SiteJob> jobs, std::int64_t covered_until_ms,
                       std::int64_t update_id, double g_per_kwh);
  // Records how the update ended.
  void finish_update(std::int64_t update_id, const std::string& status, const std::string& message);

  // The jobs asked for, the most idle GPU-hours first (jobs without figures last).
  std::vector<SiteJob> jobs(const JobQuery& query);
  // How many jobs the query matches (without its limit).
  std::int64_t count_jobs(const JobQuery& query);
  // The sums per group. Whole local days come from usage_days, the rest (a window that starts
  // or ends inside a day, a state asked for) from the jobs themselves.
  std::vector<UsageRow> usage(const JobQuery& query, UsageBy by);
  // The sums per pair of groups (a day, then a user), for the site report: each row's group is
  // the two joined by '\x1f'.
  std::vector<UsageRow> usage(const JobQuery& query, UsageBy by, UsageBy then);
  // GPU-hours and jobs per band of mean utilization: band i is [10·i, 10·i + 10) %, the last
  // [90, 100] %; and the jobs without one.
  UtilizationBands utilization_bands(const JobQuery& query);
  // The GPUs' time per node and local day in [from, to) (node_days: every job of the nodes,
  // whatever the query's lists), for the site report's heatmap.
  std::vector<NodeDay> node_days(const JobQuery& query);
  UsageRow total(const JobQuery& query);
  // The latest updates, newest first.
  std::vector<UpdateRecord> updates(std::size_t limit);

 private:
  struct Impl;
  explicit AccountingDb(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuscope::store
