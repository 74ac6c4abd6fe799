#include "store/sweep_tables.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "store/sqlite.hpp"
#include "store/sqlite_errors.hpp"
#include "store/time_text.hpp"

namespace gpuscope::store {
namespace {

constexpr const char* kSchema = R"sql(
DROP TABLE IF EXISTS sweep;
DROP TABLE IF EXISTS sweep_plan;
DROP TABLE IF EXISTS sweep_trials;
DROP TABLE IF EXISTS sweep_settings;
DROP TABLE IF EXISTS sweep_recommendations;
DROP TABLE IF EXISTS sweep_restore;
CREATE TABLE sweep (
  knob TEXT NOT NULL, unit TEXT NOT NULL, command TEXT NOT NULL, gpus TEXT NOT NULL,
  repeat INTEGER NOT NULL, warmup_s REAL NOT NULL, max_slowdown REAL NOT NULL, eta REAL NOT NULL,
  p_max_w REAL, work_source TEXT, status TEXT NOT NULL, start_time TEXT, end_time TEXT,
  restored INTEGER NOT NULL, notes TEXT NOT NULL DEFAULT '[]', window_begin TEXT,
  window_end TEXT);
CREATE TABLE sweep_plan (position INTEGER PRIMARY KEY, setting REAL NOT NULL,
  baseline INTEGER NOT NULL);
CREATE TABLE sweep_trials (
  trial INTEGER PRIMARY KEY, run_id INTEGER REFERENCES runs (run_id), setting REAL NOT NULL,
  baseline INTEGER NOT NULL, repeat INTEGER NOT NULL, status TEXT NOT NULL, exit_code INTEGER,
  time_s REAL, energy_j REAL, energy_source TEXT, avg_power_w REAL, work_units REAL,
  throughput REAL, energy_per_unit_j REAL, temperature_mean_c REAL, temperature_max_c REAL,
  sm_clock_mean_mhz REAL, outlier INTEGER NOT NULL);
CREATE TABLE sweep_settings (
  setting REAL PRIMARY KEY, baseline INTEGER NOT NULL, trials INTEGER NOT NULL,
  outliers INTEGER NOT NULL, used INTEGER NOT NULL,
  time_s_mean REAL, time_s_min REAL, time_s_max REAL, time_s_stddev REAL,
  energy_j_mean REAL, energy_j_min REAL, energy_j_max REAL, energy_j_stddev REAL,
  avg_power_w_mean REAL, throughput_mean REAL, throughput_min REAL, throughput_max REAL,
  energy_per_unit_j_mean REAL, energy_per_unit_j_min REAL, energy_per_unit_j_max REAL,
  temperature_mean_c REAL, sm_clock_mean_mhz REAL);
CREATE TABLE sweep_recommendations (
  selector TEXT PRIMARY KEY, title TEXT NOT NULL, setting REAL, energy_j REAL, time_s REAL,
  energy_saving_pct REAL, time_change_pct REAL, note TEXT);
CREATE TABLE sweep_restore (
  device_index INTEGER NOT NULL, uuid TEXT, power_limit_w REAL NOT NULL,
  clocks_locked INTEGER NOT NULL, record_path TEXT, restored INTEGER NOT NULL);
)sql";

std::string time_text(std::int64_t unix_ns) {
  return unix_ns == 0 ? std::string() : iso8601(unix_ns);
}

void bind_spread(Statement& s, int first, const std::optional<sweep::Spread>& spread, bool full) {
  const bool has = spread && spread->count > 0;
  s.bind(first, has ? std::optional<double>(spread->mean) : std::nullopt);
  s.bind(first + 1, has ? std::optional<double>(spread->min) : std::nullopt);
  s.bind(first + 2, has ? std::optional<double>(spread->max) : std::nullopt);
  if (full) s.bind(first + 3, has ? std::optional<double>(spread->stddev) : std::nullopt);
}

void insert_sweep(Database& db, const sweep::SweepRecord& r) {
  Statement s =
      db.prepare("INSERT INTO sweep VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.bind(1, std::string(sweep::knob_name(r.knob)));
  s.bind(2, std::string(sweep::knob_unit(r.knob)));
  s.bind(3, json_text(nlohmann::json(r.command)));
  s.bind(4, json_text(nlohmann::json(r.gpus)));
  s.bind(5, std::int64_t{r.repeat});
  s.bind(6, r.warmup_s);
  s.bind(7, r.max_slowdown);
  s.bind(8, r.eta);
  s.bind(9, r.p_max_w);
  s.bind(10, r.work_source);
  s.bind(11, std::string(sweep::status_text(r.status)));
  s.bind(12, time_text(r.start_unix_ns));
  s.bind(13, time_text(r.end_unix_ns));
  s.bind(14, std::int64_t{r.restored ? 1 : 0});
  s.bind(15, json_text(nlohmann::json(r.notes)));
  s.bind(16, r.window_begin.empty() ? std::nullopt : std::optional<std::string>(r.window_begin));
  s.bind(17, r.window_end.empty() ? std::nullopt : std::optional<std::string>(r.window_end));
  s.run();
}

void insert_plan(Database& db, const sweep::SweepRecord& r) {
  Statement s = db.prepare("INSERT INTO sweep_plan VALUES (?, ?, ?)");
  for (std::size_t i = 0; i < r.plan.size(); ++i) {
    s.bind(1, static_cast<std::int64_t>(i + 1));
    s.bind(2, r.plan[i].value);
    s.bind(3, std::int64_t{r.plan[i].baseline ? 1 : 0});
    s.run();
  }
}

void insert_trials(Database& db, const sweep::SweepRecord& r) {
  Statement s = db.prepare(
      "INSERT INTO sweep_trials VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const auto& t : r.trials) {
    s.bind(1, std::int64_t{t.number});
    s.bind(2, t.run_id);
    s.bind(3, t.setting);
    s.bind(4, std::int64_t{t.baseline ? 1 : 0});
    s.bind(5, std::int64_t{t.repeat});
    s.bind(6, std::string(sweep::status_text(t.status)));
    s.bind(7, t.exit_code);
    s.bind(8, t.status == sweep::TrialStatus::Planned ? std::nullopt
                                                      : std::optional<double>(t.time_s));
    s.bind(9, t.energy_j);
    s.bind(10,
           t.energy_source.empty() ? std::nullopt : std::optional<std::string>(t.energy_source));
    s.bind(11, t.avg_power_w);
    s.bind(12, t.work_units);
    s.bind(13, t.throughput);
    s.bind(14, t.energy_per_unit_j);
    s.bind(15, t.temperature_mean_c);
    s.bind(16, t.temperature_max_c);
    s.bind(17, t.sm_clock_mean_mhz);
    s.bind(18, std::int64_t{t.outlier ? 1 : 0});
    s.run();
  }
}

void insert_settings(Database& db, const sweep::SweepRecord& r) {
  Statement s = db.prepare(
      "INSERT INTO sweep_settings VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
      "?, ?, ?, ?)");
  for (const auto& m : r.summaries) {
    s.bind(1, m.setting);
    s.bind(2, std::int64_t{m.baseline ? 1 : 0});
    s.bind(3, std::int64_t{m.trials});
    s.bind(4, std::int64_t{m.outliers});
    s.bind(5, std::int64_t{m.energy_j.count});
    bind_spread(s, 6, m.time_s, true);
    bind_spread(s, 10, m.energy_j, true);
    s.bind(14, m.avg_power_w ? std::optional<double>(m.avg_power_w->mean) : std::nullopt);
    bind_spread(s, 15, m.throughput, false);
    bind_spread(s, 18, m.energy_per_unit_j, false);
    s.bind(21, m.temperature_mean_c);
    s.bind(22, m.sm_clock_mean_mhz);
    s.run();
  }
}

void insert_recommendations(Database& db, const sweep::SweepRecord& r) {
  Statement s = db.prepare("INSERT INTO sweep_recommendations VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  for (const auto& c : r.recommendations) {
    const bool has = c.setting.has_value();
    s.bind(1, c.selector);
    s.bind(2, c.title);
    s.bind(3, c.setting);
    s.bind(4, has ? std::optional<double>(c.energy_j) : std::nullopt);
    s.bind(5, has ? std::optional<double>(c.time_s) : std::nullopt);
    s.bind(6, has ? std::optional<double>(c.energy_saving_pct) : std::nullopt);
    s.bind(7, has ? std::optional<double>(c.time_change_pct) : std::nullopt);
    s.bind(8, c.note);
    s.run();
  }
}

void insert_restore(Database& db, const sweep::SweepRecord& r) {
  Statement s = db.prepare("INSERT INTO sweep_restore VALUES (?, ?, ?, ?, ?, ?)");
  for (const auto& g : r.restore.gpus) {
    s.bind(1, std::int64_t{g.index});
    s.bind(2, g.uuid);
    s.bind(3, g.power_limit_mw / 1000.0);
    s.bind(4, std::int64_t{g.clocks_locked ? 1 : 0});
    s.bind(5, r.restore.output + ".restore.json");
    s.bind(6, std::int64_t{r.restored ? 1 : 0});
    s.run();
  }
}

void insert_all(Database& db, const sweep::SweepRecord& r) {
  insert_sweep(db, r);
  insert_plan(db, r);
  insert_trials(db, r);
  insert_settings(db, r);
  insert_recommendations(db, r);
  insert_restore(db, r);
}

// A status word this gpuscope does not know (a newer one wrote the file, or it was edited).
Error unknown_status(std::string_view table, const std::string& word) {
  return Error(fmt::format("the {} table holds the status '{}', which this gpuscope does not know",
                           table, word),
               {}, "read the file with the gpuscope that wrote it, or a newer one");
}

sweep::SweepRecord read_all(Database& db) {
  sweep::SweepRecord r;
  {
    Statement s = db.prepare(
        "SELECT knob, command, gpus, repeat, warmup_s, max_slowdown, eta, p_max_w, work_source, "
        "status, restored, notes FROM sweep");
    if (!s.step()) throw SqliteError(SQLITE_CORRUPT, "the sweep table has no row");
    r.knob = s.text(0) == "sm_clock" ? sweep::Knob::SmClock : sweep::Knob::PowerLimit;
    r.command = nlohmann::json::parse(s.text(1)).get<std::vector<std::string>>();
    r.gpus = nlohmann::json::parse(s.text(2)).get<std::vector<unsigned>>();
    r.repeat = static_cast<int>(s.int64(3));
    r.warmup_s = s.real(4);
    r.max_slowdown = s.real(5);
    r.eta = s.real(6);
    r.p_max_w = s.opt_real(7).value_or(0);
    r.work_source = s.opt_text(8).value_or("");
    const std::string status = s.text(9);
    const auto known = sweep::parse_sweep_status(status);
    if (!known) throw unknown_status("sweep", status);
    r.status = *known;
    r.restored = s.int64(10) != 0;
    r.notes = nlohmann::json::parse(s.text(11)).get<std::vector<std::string>>();
  }
  // The window's columns came later: older files have none.
  if (db.query_int("SELECT count(*) FROM pragma_table_info('sweep') WHERE name = 'window_end'")
          .value_or(0) > 0) {
    Statement s = db.prepare("SELECT window_begin, window_end FROM sweep");
    if (s.step()) {
      r.window_begin = s.opt_text(0).value_or("");
      r.window_end = s.opt_text(1).value_or("");
    }
  }
  {
    Statement s = db.prepare("SELECT setting, baseline FROM sweep_plan ORDER BY position");
    while (s.step()) r.plan.push_back({s.real(0), s.int64(1) != 0});
  }
  {
    Statement s = db.prepare(
        "SELECT trial, run_id, setting, baseline, repeat, status, exit_code, time_s, energy_j, "
        "energy_source, avg_power_w, work_units, throughput, energy_per_unit_j, "
        "temperature_mean_c, temperature_max_c, sm_clock_mean_mhz, outlier FROM sweep_trials "
        "ORDER BY trial");
    while (s.step()) {
      sweep::Trial t;
      t.number = static_cast<int>(s.int64(0));
      t.run_id = s.opt_int64(1);
      t.setting = s.real(2);
      t.baseline = s.int64(3) != 0;
      t.repeat = static_cast<int>(s.int64(4));
      const std::string status = s.text(5);
      const auto known = sweep::parse_trial_status(status);
      if (!known) throw unknown_status("sweep_trials", status);
      t.status = *known;
      if (auto code = s.opt_int64(6)) t.exit_code = static_cast<int>(*code);
      t.time_s = s.opt_real(7).value_or(0);
      t.energy_j = s.opt_real(8);
      t.energy_source = s.opt_text(9).value_or("");
      t.avg_power_w = s.opt_real(10);
      t.work_units = s.opt_real(11);
      t.throughput = s.opt_real(12);
      t.energy_per_unit_j = s.opt_real(13);
      t.temperature_mean_c = s.opt_real(14);
      t.temperature_max_c = s.opt_real(15);
      t.sm_clock_mean_mhz = s.opt_real(16);
      t.outlier = s.int64(17) != 0;
      r.trials.push_back(std::move(t));
    }
  }
  {
    Statement s = db.prepare(
        "SELECT selector, title, setting, energy_j, time_s, energy_saving_pct, time_change_pct, "
        "note FROM sweep_recommendations ORDER BY rowid");
    while (s.step()) {
      sweep::Recommendation c;
      c.selector = s.text(0);
      c.title = s.text(1);
      c.setting = s.opt_real(2);
      c.energy_j = s.opt_real(3).value_or(0);
      c.time_s = s.opt_real(4).value_or(0);
      c.energy_saving_pct = s.opt_real(5).value_or(0);
      c.time_change_pct = s.opt_real(6).value_or(0);
      c.note = s.opt_text(7).value_or("");
      r.recommendations.push_back(std::move(c));
    }
  }
  {
    Statement s = db.prepare(
        "SELECT device_index, uuid, power_limit_w, clocks_locked, record_path FROM sweep_restore "
        "ORDER BY rowid");
    while (s.step()) {
      sweep::RestoreEntry g;
      g.index = static_cast<unsigned>(s.int64(0));
      g.uuid = s.opt_text(1).value_or("");
      g.power_limit_mw = static_cast<unsigned>(std::lround(s.real(2) * 1000));
      g.clocks_locked = s.int64(3) != 0;
      r.restore.gpus.push_back(std::move(g));
    }
  }
  return r;
}

}  // namespace

std::optional<sweep::SweepRecord> read_sweep_tables(const std::filesystem::path& path) {
  try {
    Database db(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
    db.exec("PRAGMA busy_timeout = 5000");
    if (db.query_int("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sweep'")
            .value_or(0) == 0) {
      return std::nullopt;
    }
    return read_all(db);
  } catch (const SqliteError& e) {
    throw Error(fmt::format("cannot read the sweep tables of {}", path.string()), e.what(),
                "check that it is a gpuscope sweep database");
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("cannot read the sweep tables of {}", path.string()), e.what(),
                "check that it is a gpuscope sweep database");
  }
}

void write_sweep_tables(const std::filesystem::path& path, const sweep::SweepRecord& record) {
  translate_sqlite_errors(fmt::format("cannot write the sweep tables into {}", path.string()),
                          "the trials' runs are in the file; check the free space", [&] {
                            Database db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
                            db.exec("PRAGMA busy_timeout = 5000");
                            db.exec("BEGIN IMMEDIATE");
                            db.exec(kSchema);
                            insert_all(db, record);
                            db.exec("COMMIT");
                          });
}

}  // namespace gpuscope::store
