#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "store/accounting_db.hpp"
#include "store/accounting_impl.hpp"
#include "store/sqlite_errors.hpp"
#include "util/local_time.hpp"

namespace gpuscope::store {

namespace {

std::string local_day_text(std::int64_t ms, bool week) {
  return util::local_text(ms, week ? "%G-W%V" : "%Y-%m-%d");
}

std::string flags_text(const SiteJob& job) {
  std::vector<std::string_view> words;
  for (const JobFlag f : job.flags) words.push_back(flag_word(f));
  return fmt::format("{}", fmt::join(words, ","));
}

void insert_job(Statement& s, const SiteJob& j, std::int64_t update_id, double g_per_kwh) {
  int i = 0;
  s.bind(++i, j.id);
  s.bind(++i, j.shown_id);
  s.bind(++i, j.name);
  s.bind(++i, j.user);
  s.bind(++i, j.account);
  s.bind(++i, j.partition);
  s.bind(++i, j.state);
  s.bind(++i, j.exit_code);
  s.bind(++i, j.start_ms);
  s.bind(++i, j.end_ms);
  s.bind(++i, local_day_text(j.end_ms, false));
  s.bind(++i, local_day_text(j.end_ms, true));
  s.bind(++i, fmt::format("{}", fmt::join(j.nodes, ",")));
  s.bind(++i, std::int64_t{j.gpus});
  s.bind(++i, j.gpu_model);
  s.bind(++i, j.gpu_hours);
  s.bind(++i, j.idle_gpu_hours);
  s.bind(++i, j.util_pct);
  s.bind(++i, j.sm_active_pct);
  s.bind(++i, j.peak_memory_bytes);
  s.bind(++i, j.energy_j);
  s.bind(++i, j.node_energy_j);
  s.bind(++i, j.co2_g);
  s.bind(++i, j.co2_g ? std::optional<double>(g_per_kwh) : std::nullopt);
  s.bind(++i, j.score);
  s.bind(++i, flags_text(j));
  s.bind(++i, std::string(source_word(j.source)));
  s.bind(++i, fmt::format("{}", fmt::join(j.notes, "\n")));
  s.bind(++i, update_id);
  s.run();
}

void insert_gpu(Statement& s, const std::string& job_id, const SiteJobGpu& g) {
  int i = 0;
  s.bind(++i, job_id);
  s.bind(++i, g.key);
  s.bind(++i, g.node);
  s.bind(++i, g.index);
  s.bind(++i, g.model);
  s.bind(++i, g.mig_profile);
  s.bind(++i, g.samples);
  s.bind(++i, g.util_pct);
  s.bind(++i, g.sm_active_pct);
  s.bind(++i, g.idle_share);
  s.bind(++i, g.peak_memory_bytes);
  s.bind(++i, g.memory_total_bytes);
  s.bind(++i, g.energy_j);
  s.bind(++i, g.energy_source
                  ? std::optional<std::string>(
                        *g.energy_source == EnergySource::Counter ? "counter" : "integrated")
                  : std::nullopt);
  s.bind(++i, g.mean_power_w);
  s.bind(++i, g.score);
  s.bind(++i, std::int64_t{g.health_faults});
  s.run();
}

// The job added to its day's sums (usage_days), as fleet::UsageSum adds it.
void add_to_day(Statement& s, const SiteJob& j) {
  const auto weight = [&](const std::optional<double>& v) { return v ? j.gpu_hours : 0.0; };
  const auto weighted = [&](const std::optional<double>& v) { return v ? *v * j.gpu_hours : 0.0; };
  int i = 0;
  s.bind(++i, local_day_text(j.end_ms, false));
  s.bind(++i, local_day_text(j.end_ms, true));
  s.bind(++i, j.user);
  s.bind(++i, j.account);
  s.bind(++i, j.partition);
  s.bind(++i, j.gpu_model);
  s.bind(++i, j.gpu_hours);
  s.bind(++i, j.idle_gpu_hours.value_or(0));
  s.bind(++i, j.energy_j.value_or(0));
  s.bind(++i, j.co2_g.value_or(0));
  s.bind(++i, weight(j.util_pct));
  s.bind(++i, weighted(j.util_pct));
  s.bind(++i, weight(j.sm_active_pct));
  s.bind(++i, weighted(j.sm_active_pct));
  s.bind(++i, weight(j.score));
  s.bind(++i, weighted(j.score));
  s.bind(++i, std::int64_t{j.source == JobSource::None ? 1 : 0});
  s.bind(++i, std::int64_t{j.flags.empty() ? 0 : 1});
  s.run();
}

// Local midnight after the day `ms` falls in.
std::int64_t next_midnight(std::int64_t ms) {
  return util::local_midnight_after(ms, false);
}

// The job's GPUs' time added to their nodes' days (node_days), split at local midnights.
void add_to_nodes(Statement& s, const SiteJob& j) {
  std::map<std::string, int> gpus;
  for (const auto& g : j.gpu_rows) ++gpus[g.node];
  for (const auto& g : j.gpu_rows) {
    if (!g.util_pct || g.node.empty()) continue;
    for (std::int64_t t = j.start_ms; t < j.end_ms;) {
      const std::int64_t until = std::min(j.end_ms, next_midnight(t));
      const double seconds = static_cast<double>(until - t) / 1000;
      s.bind(1, g.node);
      s.bind(2, local_day_text(t, false));
      s.bind(3, seconds);
      s.bind(4, seconds * *g.util_pct);
      s.bind(5, std::int64_t{gpus[g.node]});
      s.run();
      t = until;
    }
  }
}

constexpr const char* kAddNodeDay =
    "INSERT INTO node_days VALUES(?,?,?,?,?) ON CONFLICT(node, day) DO UPDATE SET "
    "held_gpu_s = held_gpu_s + excluded.held_gpu_s, "
    "util_gpu_s = util_gpu_s + excluded.util_gpu_s, gpus = max(gpus, excluded.gpus)";

constexpr const char* kInsertJob =
    "INSERT OR IGNORE INTO jobs VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
constexpr const char* kInsertGpu =
    "INSERT OR REPLACE INTO job_gpus VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
constexpr const char* kAddDay =
    "INSERT INTO usage_days VALUES(?,?,?,?,?,?,1,?,?,?,?,?,?,?,?,?,?,?,?) "
    "ON CONFLICT(day, user, account, partition, gpu_model) DO UPDATE SET "
    "jobs = jobs + 1, gpu_hours = gpu_hours + excluded.gpu_hours, "
    "idle_gpu_hours = idle_gpu_hours + excluded.idle_gpu_hours, "
    "energy_j = energy_j + excluded.energy_j, co2_g = co2_g + excluded.co2_g, "
    "util_weight = util_weight + excluded.util_weight, util_sum = util_sum + excluded.util_sum, "
    "sm_weight = sm_weight + excluded.sm_weight, sm_sum = sm_sum + excluded.sm_sum, "
    "score_weight = score_weight + excluded.score_weight, "
    "score_sum = score_sum + excluded.score_sum, "
    "jobs_without_figures = jobs_without_figures + excluded.jobs_without_figures, "
    "flagged_jobs = flagged_jobs + excluded.flagged_jobs";

}  // namespace

std::size_t AccountingDb::add_jobs(std::span<const SiteJob> jobs, std::int64_t covered_until_ms,
                                   std::int64_t update_id, double g_per_kwh) {
  return translate_sqlite_errors(
      fmt::format("cannot add jobs to the accounting database {}", impl_->path.string()),
      "nothing of this batch was written; the next update adds it (a full disk, another writer)",
      [&] {
        Database& db = impl_->db;
        db.exec("BEGIN IMMEDIATE");
        try {
          auto job = db.prepare(kInsertJob);
          auto gpu = db.prepare(kInsertGpu);
          auto day = db.prepare(kAddDay);
          auto node = db.prepare(kAddNodeDay);
          std::size_t added = 0;
          for (const SiteJob& j : jobs) {
            insert_job(job, j, update_id, g_per_kwh);
            if (db.changes() == 0) continue;  // in already: left as it is, counted once
            ++added;
            for (const auto& g : j.gpu_rows) insert_gpu(gpu, j.id, g);
            add_to_day(day, j);
            add_to_nodes(node, j);
          }
          auto cover = db.prepare(
              "UPDATE updates SET covered_until_ms = max(coalesce(covered_until_ms, 0), ?), "
              "jobs_added = jobs_added + ? WHERE id = ?");
          cover.bind(1, covered_until_ms);
          cover.bind(2, static_cast<std::int64_t>(added));
          cover.bind(3, update_id);
          cover.run();
          db.exec("COMMIT");
          return added;
        } catch (...) {
          try {
            db.exec("ROLLBACK");
          } catch (const SqliteError&) {  // SQLite rolled back already (a full disk)
          }
          throw;
        }
      });
}

}  // namespace gpuscope::store
