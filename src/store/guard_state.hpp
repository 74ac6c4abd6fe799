// guard's state database (docs/guard.md, "What guard remembers"): what it knows of each running
// job between cycles (the idle streak, the steps taken), every notice it sent (so a restart
// never sends one twice), the nodes it drained, the admins' digests, and the audit of every
// action with the figures behind it. One SQLite file in WAL mode, mode 0600 (it names users and
// jobs); each cycle's changes are one transaction, so a guard killed mid-cycle leaves the
// previous cycle's state, never half of one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope::store {

inline constexpr int kGuardSchema = 1;

// What guard remembers of one job.
struct GuardJobMemory {
  std::optional<std::int64_t> checked_until_ms;  // the end of the last window judged
  std::optional<std::int64_t> idle_since_ms;     // the start of the current idle streak
  std::optional<std::int64_t> first_warning_ms;  // when each step was taken
  std::optional<std::int64_t> second_warning_ms;
  std::optional<std::int64_t> cancelled_ms;
  bool advised_too_large = false;
};

// One line of the audit: an action guard took or would take (enforced false: a dry run).
struct GuardAudit {
  std::int64_t time_ms = 0;
  std::string action;  // first_warning, second_warning, cancel, advice, drain, notice, breaker
  std::string target;  // a job id or a node
  std::string user;
  bool enforced = false;
  std::string outcome;  // "done", "dry-run", "failed: ...", "held by the circuit breaker"
  std::string figures;  // JSON: what triggered it
};

class GuardState {
 public:
  // Opens `path`, creating it (mode 0600) with its schema. Throws Error for a file that is
  // another program's, newer, or that this user may not write.
  static GuardState open(const std::filesystem::path& path);
  GuardState(GuardState&&) noexcept;
  GuardState& operator=(GuardState&&) noexcept;
  ~GuardState();

  const std::filesystem::path& path() const;

  // Records the mode guard runs in ("enforce" or "dry-run"). A dry run remembers the steps it
  // would have taken, so the first run in the other mode forgets every job's memory (the audit
  // and the notices sent stay); true when it did.
  bool switch_mode(const std::string& mode);

  void begin();  // a cycle's transaction
  void commit();

  std::map<std::string, GuardJobMemory> jobs();
  void save_job(const std::string& job_id, const GuardJobMemory& memory, std::int64_t seen_ms);
  // Forgets jobs not seen running since `before_ms` (they ended); how many.
  std::size_t forget_jobs(std::int64_t before_ms);

  // Records that the notice `key` (job, step, channel, recipient) is sent; false when it was
  // already: the caller then does not send it again.
  bool claim_notice(const std::string& key, const std::string& recipient, std::int64_t now_ms);
  // Gives back a claim whose sending failed, so the next cycle tries again.
  void release_notice(const std::string& key);
  std::size_t notices_to(const std::string& recipient, std::int64_t since_ms);

  // A time kept between cycles under `key` ("health_until_ms": the end of the last health
  // window read).
  std::optional<std::int64_t> time_mark(const std::string& key);
  void set_time_mark(const std::string& key, std::int64_t ms);

  void record_drain(const std::string& node, const std::string& reason, std::int64_t now_ms);
  std::optional<std::int64_t> drained_ms(const std::string& node);

  // True the first time it is asked for `day` (the digest is then due).
  bool claim_digest(const std::string& day, std::int64_t now_ms);

  void audit(const GuardAudit& record);
  std::vector<GuardAudit> audit_since(std::int64_t from_ms);

 private:
  struct Impl;
  explicit GuardState(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuscope::store
