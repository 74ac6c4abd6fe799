#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include "store/accounting_db.hpp"
#include "store/accounting_impl.hpp"
#include "store/sqlite_errors.hpp"
#include "util/local_time.hpp"

namespace gpuscope::store {

namespace {

// A WHERE clause and what it binds, in order.
struct Where {
  std::string sql;
  std::vector<std::string> texts;  // bound first, in order
  std::vector<std::int64_t> numbers;
  std::vector<bool> is_text;  // per parameter

  void add(const std::string& clause) { sql += (sql.empty() ? " WHERE " : " AND ") + clause; }
  void text(const std::string& v) {
    texts.push_back(v);
    is_text.push_back(true);
  }
  void number(std::int64_t v) {
    numbers.push_back(v);
    is_text.push_back(false);
  }
  void in(const std::string& column, const std::vector<std::string>& values) {
    if (values.empty()) return;
    std::string marks;
    for (const auto& v : values) {
      marks += marks.empty() ? "?" : ",?";
      text(v);
    }
    add(fmt::format("{} IN ({})", column, marks));
  }
  void bind(Statement& s) const {
    std::size_t t = 0, n = 0;
    for (std::size_t i = 0; i < is_text.size(); ++i) {
      if (is_text[i]) {
        s.bind(static_cast<int>(i + 1), texts[t++]);
      } else {
        s.bind(static_cast<int>(i + 1), numbers[n++]);
      }
    }
  }
};

// The jobs table's WHERE for `q`, time by end_ms in [from, to).
Where job_where(const JobQuery& q) {
  Where w;
  if (q.from_ms) {
    w.add("end_ms >= ?");
    w.number(*q.from_ms);
  }
  if (q.to_ms) {
    w.add("end_ms < ?");
    w.number(*q.to_ms);
  }
  w.in("user", q.users);
  w.in("account", q.accounts);
  w.in("partition", q.partitions);
  w.in("state", q.states);
  w.in("job_id", q.job_ids);
  return w;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, separator)) out.push_back(item);
  return out;
}

SiteJobGpu gpu_of_row(Statement& s) {
  SiteJobGpu g;
  int i = 0;
  g.key = s.text(++i);
  g.node = s.text(++i);
  if (const auto v = s.opt_int64(++i)) g.index = static_cast<unsigned>(*v);
  g.model = s.text(++i);
  g.mig_profile = s.opt_text(++i);
  g.samples = s.int64(++i);
  g.util_pct = s.opt_real(++i);
  g.sm_active_pct = s.opt_real(++i);
  g.idle_share = s.opt_real(++i);
  g.peak_memory_bytes = s.opt_real(++i);
  g.memory_total_bytes = s.opt_real(++i);
  g.energy_j = s.opt_real(++i);
  if (const auto v = s.opt_text(++i)) {
    g.energy_source = *v == "counter" ? EnergySource::Counter : EnergySource::Integrated;
  }
  g.mean_power_w = s.opt_real(++i);
  g.score = s.opt_real(++i);
  g.health_faults = static_cast<int>(s.int64(++i));
  return g;
}

// The raw sums of a group (what usage_days keeps), merged across the two sources.
struct Sums {
  std::int64_t jobs = 0, without = 0, flagged = 0;
  double gpu_hours = 0, idle = 0, energy = 0, co2 = 0;
  double util_w = 0, util_s = 0, sm_w = 0, sm_s = 0, score_w = 0, score_s = 0;
};

constexpr const char* kSumsOfJobs =
    "count(*), sum(gpu_hours), sum(coalesce(idle_gpu_hours, 0)), sum(coalesce(energy_j, 0)), "
    "sum(coalesce(co2_g, 0)), sum(iif(util_pct IS NULL, 0, gpu_hours)), "
    "sum(coalesce(util_pct * gpu_hours, 0)), sum(iif(sm_active_pct IS NULL, 0, gpu_hours)), "
    "sum(coalesce(sm_active_pct * gpu_hours, 0)), sum(iif(score IS NULL, 0, gpu_hours)), "
    "sum(coalesce(score * gpu_hours, 0)), sum(source = 'none'), sum(flags <> '')";
constexpr const char* kSumsOfDays =
    "sum(jobs), sum(gpu_hours), sum(idle_gpu_hours), sum(energy_j), sum(co2_g), "
    "sum(util_weight), sum(util_sum), sum(sm_weight), sum(sm_sum), sum(score_weight), "
    "sum(score_sum), sum(jobs_without_figures), sum(flagged_jobs)";

void add_sums(Statement& s, int first, Sums& into) {
  int i = first;
  into.jobs += s.int64(i++);
  into.gpu_hours += s.real(i++);
  into.idle += s.real(i++);
  into.energy += s.real(i++);
  into.co2 += s.real(i++);
  into.util_w += s.real(i++);
  into.util_s += s.real(i++);
  into.sm_w += s.real(i++);
  into.sm_s += s.real(i++);
  into.score_w += s.real(i++);
  into.score_s += s.real(i++);
  into.without += s.int64(i++);
  into.flagged += s.int64(i++);
}

UsageRow row_of(const std::string& group, const Sums& s) {
  UsageRow r;
  r.group = group.empty() ? "(none)" : group;
  r.jobs = s.jobs;
  r.gpu_hours = s.gpu_hours;
  r.idle_gpu_hours = s.idle;
  r.energy_j = s.energy;
  r.co2_g = s.co2;
  auto mean = [](double sum, double w) {
    return w > 0 ? std::optional<double>(sum / w) : std::nullopt;
  };
  r.util_pct = mean(s.util_s, s.util_w);
  r.sm_active_pct = mean(s.sm_s, s.sm_w);
  r.score = mean(s.score_s, s.score_w);
  r.jobs_without_figures = s.without;
  r.flagged_jobs = s.flagged;
  return r;
}

const char* column_of(UsageBy by, bool days) {
  switch (by) {
    case UsageBy::User:
      return "user";
    case UsageBy::Account:
      return "account";
    case UsageBy::Partition:
      return "partition";
    case UsageBy::GpuModel:
      return "gpu_model";
    case UsageBy::Day:
      return days ? "day" : "end_day";
    case UsageBy::Week:
      return days ? "week" : "end_week";
  }
  return "user";
}

// Local midnight at or after `ms` (whole days start there), and at or before.
std::int64_t midnight(std::int64_t ms, bool after) {
  return after ? util::local_midnight_after(ms, true) : util::local_midnight_before(ms);
}

std::string day_text(std::int64_t ms) {
  return util::local_text(ms, "%Y-%m-%d");
}

// The group a row falls in: one column, or two joined by a unit separator (a day, then a user).
struct Grouping {
  UsageBy by = UsageBy::User;
  std::optional<UsageBy> then;
  std::string expr(bool days) const {
    if (!then) return column_of(by, days);
    return fmt::format("{} || char(31) || {}", column_of(by, days), column_of(*then, days));
  }
};

// The jobs' sums per group, from the jobs table.
void add_job_sums(Database& db, const JobQuery& query, const Grouping& by,
                  std::map<std::string, Sums>& groups) {
  const Where w = job_where(query);
  auto s = db.prepare(
      fmt::format("SELECT {}, {} FROM jobs{} GROUP BY 1", by.expr(false), kSumsOfJobs, w.sql));
  w.bind(s);
  while (s.step()) add_sums(s, 1, groups[s.text(0)]);
}

// The sums of the whole local days [lo, hi) per group, from usage_days.
void add_day_sums(Database& db, const JobQuery& query, const Grouping& by, std::int64_t lo,
                  std::int64_t hi, std::map<std::string, Sums>& groups) {
  Where w;
  w.in("user", query.users);
  w.in("account", query.accounts);
  w.in("partition", query.partitions);
  if (query.from_ms) {
    w.add("day >= ?");
    w.text(day_text(lo));
  }
  if (query.to_ms) {
    w.add("day < ?");
    w.text(day_text(hi));
  }
  auto s = db.prepare(
      fmt::format("SELECT {}, {} FROM usage_days{} GROUP BY 1", by.expr(true), kSumsOfDays, w.sql));
  w.bind(s);
  while (s.step()) add_sums(s, 1, groups[s.text(0)]);
}

}  // namespace

SiteJob job_of_row(Statement& s) {
  SiteJob j;
  int i = 0;
  j.id = s.text(i++);
  j.shown_id = s.text(i++);
  j.name = s.text(i++);
  j.user = s.text(i++);
  j.account = s.text(i++);
  j.partition = s.text(i++);
  j.state = s.text(i++);
  if (const auto v = s.opt_int64(i++)) j.exit_code = static_cast<int>(*v);
  j.start_ms = s.int64(i++);
  j.end_ms = s.int64(i++);
  i += 2;  // end_day, end_week
  j.nodes = split(s.text(i++), ',');
  j.gpus = static_cast<int>(s.int64(i++));
  j.gpu_model = s.text(i++);
  j.gpu_hours = s.real(i++);
  j.idle_gpu_hours = s.opt_real(i++);
  j.util_pct = s.opt_real(i++);
  j.sm_active_pct = s.opt_real(i++);
  j.peak_memory_bytes = s.opt_real(i++);
  j.energy_j = s.opt_real(i++);
  j.node_energy_j = s.opt_real(i++);
  j.co2_g = s.opt_real(i++);
  ++i;  // g_per_kwh
  j.score = s.opt_real(i++);
  for (const auto& word : split(s.text(i++), ',')) {
    if (const auto f = parse_flag(word)) j.flags.push_back(*f);
  }
  const std::string source = s.text(i++);
  j.source = source == "tsdb"           ? JobSource::Tsdb
             : source == "kept summary" ? JobSource::KeptSummary
                                        : JobSource::None;
  j.notes = split(s.text(i++), '\n');
  return j;
}

std::vector<SiteJob> AccountingDb::jobs(const JobQuery& query) {
  return translate_sqlite_errors(
      fmt::format("cannot read the jobs of {}", impl_->path.string()), "the file may be damaged",
      [&] {
        const Where w = job_where(query);
        std::string sql = "SELECT * FROM jobs" + w.sql +
                          " ORDER BY idle_gpu_hours IS NULL, idle_gpu_hours DESC, end_ms DESC";
        if (query.limit > 0) sql += fmt::format(" LIMIT {}", query.limit);
        auto s = impl_->db.prepare(sql);
        w.bind(s);
        std::vector<SiteJob> out;
        while (s.step()) out.push_back(job_of_row(s));
        if (query.gpu_rows) {
          auto g =
              impl_->db.prepare("SELECT * FROM job_gpus WHERE job_id = ? ORDER BY node, gpu_key");
          for (auto& j : out) {
            g.bind(1, j.id);
            while (g.step()) j.gpu_rows.push_back(gpu_of_row(g));
            g.reset();
          }
        }
        return out;
      });
}

std::int64_t AccountingDb::count_jobs(const JobQuery& query) {
  return translate_sqlite_errors(fmt::format("cannot read the jobs of {}", impl_->path.string()),
                                 "the file may be damaged", [&] {
                                   const Where w = job_where(query);
                                   auto s = impl_->db.prepare("SELECT count(*) FROM jobs" + w.sql);
                                   w.bind(s);
                                   return s.step() ? s.int64(0) : std::int64_t{0};
                                 });
}

namespace {

// The sums per group of `query`: whole local days from usage_days, the rest (a window that
// starts or ends inside a day, a state or job asked for: not kept there) from the jobs.
std::map<std::string, Sums> group_sums(Database& db, const JobQuery& query, const Grouping& by) {
  std::map<std::string, Sums> groups;
  const std::int64_t lo = query.from_ms ? midnight(*query.from_ms, true) : 0;
  const std::int64_t hi = query.to_ms ? midnight(*query.to_ms, false) : INT64_MAX;
  if (!query.states.empty() || !query.job_ids.empty() || lo >= hi) {
    add_job_sums(db, query, by, groups);
    return groups;
  }
  add_day_sums(db, query, by, lo, hi, groups);
  if (query.from_ms && *query.from_ms < lo) {  // the part day before the whole days
    JobQuery before = query;
    before.to_ms = lo;
    add_job_sums(db, before, by, groups);
  }
  if (query.to_ms && hi < *query.to_ms) {  // and after them
    JobQuery after = query;
    after.from_ms = hi;
    add_job_sums(db, after, by, groups);
  }
  return groups;
}

}  // namespace

std::vector<UsageRow> AccountingDb::usage(const JobQuery& query, UsageBy by) {
  return translate_sqlite_errors(
      fmt::format("cannot read the usage of {}", impl_->path.string()), "the file may be damaged",
      [&] {
        std::vector<UsageRow> out;
        for (const auto& [group, sums] : group_sums(impl_->db, query, Grouping{by, {}})) {
          out.push_back(row_of(group, sums));
        }
        return out;
      });
}

std::vector<UsageRow> AccountingDb::usage(const JobQuery& query, UsageBy by, UsageBy then) {
  return translate_sqlite_errors(
      fmt::format("cannot read the usage of {}", impl_->path.string()), "the file may be damaged",
      [&] {
        std::vector<UsageRow> out;
        for (const auto& [group, sums] : group_sums(impl_->db, query, Grouping{by, then})) {
          out.push_back(row_of(group, sums));
          out.back().group = group;  // both parts, even where one is empty
        }
        return out;
      });
}

// The groups' raw sums added up: a mean's weight is the GPU-hours of the jobs that have the
// figure, not of the whole group.
UsageRow AccountingDb::total(const JobQuery& query) {
  return translate_sqlite_errors(fmt::format("cannot read the usage of {}", impl_->path.string()),
                                 "the file may be damaged", [&] {
                                   Sums all;
                                   for (const auto& [group, s] : group_sums(
                                            impl_->db, query, Grouping{UsageBy::Partition, {}})) {
                                     all.jobs += s.jobs;
                                     all.without += s.without;
                                     all.flagged += s.flagged;
                                     all.gpu_hours += s.gpu_hours;
                                     all.idle += s.idle;
                                     all.energy += s.energy;
                                     all.co2 += s.co2;
                                     all.util_w += s.util_w;
                                     all.util_s += s.util_s;
                                     all.sm_w += s.sm_w;
                                     all.sm_s += s.sm_s;
                                     all.score_w += s.score_w;
                                     all.score_s += s.score_s;
                                   }
                                   return row_of("all", all);
                                 });
}

UtilizationBands AccountingDb::utilization_bands(const JobQuery& query) {
  return translate_sqlite_errors(
      fmt::format("cannot read the jobs of {}", impl_->path.string()), "the file may be damaged",
      [&] {
        const Where w = job_where(query);
        auto s = impl_->db.prepare(
            "SELECT iif(util_pct IS NULL, -1, min(9, max(0, CAST(util_pct / 10 AS INTEGER)))), "
            "sum(gpu_hours), count(*) FROM jobs" +
            w.sql + " GROUP BY 1");
        w.bind(s);
        UtilizationBands bands;
        while (s.step()) {
          const std::int64_t band = s.int64(0);
          if (band < 0) {
            bands.unknown += s.int64(2);
            continue;
          }
          bands.gpu_hours[static_cast<std::size_t>(band)] += s.real(1);
          bands.jobs[static_cast<std::size_t>(band)] += s.int64(2);
        }
        return bands;
      });
}

std::vector<NodeDay> AccountingDb::node_days(const JobQuery& query) {
  return translate_sqlite_errors(
      fmt::format("cannot read the nodes of {}", impl_->path.string()), "the file may be damaged",
      [&] {
        Where w;
        if (query.from_ms) {
          w.add("day >= ?");
          w.text(day_text(*query.from_ms));
        }
        if (query.to_ms) {
          w.add("day <= ?");
          w.text(day_text(*query.to_ms - 1));
        }
        auto s = impl_->db.prepare("SELECT node, day, held_gpu_s, util_gpu_s, gpus FROM node_days" +
                                   w.sql + " ORDER BY node, day");
        w.bind(s);
        std::vector<NodeDay> out;
        while (s.step()) {
          out.push_back({s.text(0), s.text(1), s.real(2), s.real(3), static_cast<int>(s.int64(4))});
        }
        return out;
      });
}

std::vector<UpdateRecord> AccountingDb::updates(std::size_t limit) {
  auto s = impl_->db.prepare(fmt::format(
      "SELECT id, started_ms, finished_ms, from_ms, to_ms, covered_until_ms, status, jobs_added, "
      "server, message FROM updates ORDER BY id DESC LIMIT {}",
      limit));
  std::vector<UpdateRecord> out;
  while (s.step()) {
    UpdateRecord r;
    r.id = s.int64(0);
    r.started_ms = s.int64(1);
    r.finished_ms = s.opt_int64(2);
    r.from_ms = s.int64(3);
    r.to_ms = s.int64(4);
    r.covered_until_ms = s.opt_int64(5);
    r.status = s.text(6);
    r.jobs_added = s.int64(7);
    r.server = s.text(8);
    r.message = s.text(9);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace gpuscope::store
