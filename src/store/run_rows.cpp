#include "store/run_rows.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "core/vendor.hpp"
#include "store/run_codec.hpp"
#include "store/schema.hpp"
#include "store/time_text.hpp"
#include "util/command_line.hpp"

namespace gpuscope::store {
namespace {

// Position of `name` in "SELECT run_id, <columns>": run_id is 0, the columns follow.
int column(std::span<const Column> columns, std::string_view name) {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == name) return static_cast<int>(i + 1);
  }
  throw std::logic_error("no column " + std::string(name));
}

// Binds `value` to the parameter ":name"; a typo is a programming error, not a runtime one.
template <typename T>
void bind(Statement& stmt, std::string_view name, const T& value) {
  const int index = stmt.parameter(name);
  if (index == 0) throw std::logic_error("no parameter :" + std::string(name));
  stmt.bind(index, value);
}

std::string insert_sql(std::string_view table, std::span<const Column> columns) {
  std::string names = "run_id";
  std::string params = ":run_id";
  for (const auto& c : columns) {
    names += ", " + std::string(c.name);
    params += ", :" + std::string(c.name);
  }
  return "INSERT INTO " + std::string(table) + " (" + names + ") VALUES (" + params + ")";
}

std::optional<std::string> non_empty(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return text;
}

double ns_to_ms(std::int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

std::int64_t ms_to_ns(double ms) {
  return std::llround(ms * 1e6);
}

std::optional<int> opt_int(const Statement& row, int index) {
  auto v = row.opt_int64(index);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<unsigned> opt_unsigned(const Statement& row, int index) {
  auto v = row.opt_int64(index);
  if (!v) return std::nullopt;
  return static_cast<unsigned>(*v);
}

std::optional<std::int64_t> opt_int64(const std::optional<unsigned>& value) {
  if (!value) return std::nullopt;
  return std::int64_t{*value};
}

// The MIG columns of one devices row (schema 1.9): mig_enabled on a GPU, who a MIG device is.
void bind_mig(Statement& stmt, const DeviceDescription& d) {
  bind(stmt, "mig_enabled",
       d.mig_enabled ? std::optional<std::int64_t>(*d.mig_enabled ? 1 : 0) : std::nullopt);
  const MigIdentity* mig = d.mig ? &*d.mig : nullptr;
  auto value = [&](unsigned MigIdentity::*member) {
    return mig ? std::optional<std::int64_t>(mig->*member) : std::nullopt;
  };
  bind(stmt, "parent_index", value(&MigIdentity::parent_index));
  bind(stmt, "mig_index", value(&MigIdentity::mig_index));
  bind(stmt, "gpu_instance_id", value(&MigIdentity::gpu_instance_id));
  bind(stmt, "compute_instance_id", mig ? opt_int64(mig->compute_instance_id) : std::nullopt);
  bind(stmt, "mig_profile", mig ? mig->profile : std::nullopt);
  bind(stmt, "gpu_slices", mig ? opt_int64(mig->gpu_slices) : std::nullopt);
  bind(stmt, "compute_slices", mig ? opt_int64(mig->compute_slices) : std::nullopt);
  bind(stmt, "multiprocessors", mig ? opt_int64(mig->multiprocessors) : std::nullopt);
  bind(stmt, "parent_slices", mig ? opt_int64(mig->parent_slices) : std::nullopt);
}

// A MIG device's identity from its row: set when parent_index and gpu_instance_id are (a row
// with either NULL is a GPU's).
std::optional<MigIdentity> read_mig(const Statement& row, const auto& at) {
  const auto parent = opt_unsigned(row, at("parent_index"));
  const auto gpu_instance = opt_unsigned(row, at("gpu_instance_id"));
  if (!parent || !gpu_instance) return std::nullopt;
  MigIdentity mig;
  mig.parent_index = *parent;
  mig.gpu_instance_id = *gpu_instance;
  mig.mig_index = opt_unsigned(row, at("mig_index")).value_or(0);
  mig.compute_instance_id = opt_unsigned(row, at("compute_instance_id"));
  mig.profile = row.opt_text(at("mig_profile"));
  mig.gpu_slices = opt_unsigned(row, at("gpu_slices"));
  mig.compute_slices = opt_unsigned(row, at("compute_slices"));
  mig.multiprocessors = opt_unsigned(row, at("multiprocessors"));
  mig.parent_slices = opt_unsigned(row, at("parent_slices"));
  return mig;
}

}  // namespace

std::int64_t insert_run(Database& db, const RunInfo& run) {
  Statement stmt = db.prepare(insert_sql("runs", run_columns()));
  const auto command = to_json_array(run.command);
  const auto command_line = util::shell_command_line(run.command);
  const auto start_time = iso8601(run.start_wall_ns);
  bind(stmt, "run_id", std::optional<std::int64_t>());  // SQLite assigns the next id
  bind(stmt, "command", command);
  bind(stmt, "command_line", command_line);
  bind(stmt, "label", non_empty(run.label));
  bind(stmt, "host", run.host);
  bind(stmt, "user", run.user);
  bind(stmt, "start_wall_ns", run.start_wall_ns);
  bind(stmt, "start_time", start_time);
  bind(stmt, "end_wall_ns", std::optional<std::int64_t>());
  bind(stmt, "end_time", std::optional<std::string>());
  bind(stmt, "start_mono_ns", run.start_mono_ns);
  bind(stmt, "end_mono_ns", std::optional<std::int64_t>());
  bind(stmt, "status", std::string(status_text(RunStatus::Running)));
  bind(stmt, "exit_code", std::optional<int>());
  bind(stmt, "term_signal", std::optional<int>());
  bind(stmt, "tool_version", run.tool_version);
  bind(stmt, "sampling_interval_ms", ns_to_ms(run.sampling_interval_ns));
  bind(stmt, "power_sampling_interval_ms", ns_to_ms(run.power_sampling_interval_ns));
  bind(stmt, "scenario", run.scenario);
  bind(stmt, "driver_version", run.driver_version);
  bind(stmt, "cuda_visible_devices", run.cuda_visible_devices);
  bind(stmt, "slurm_job_id", run.slurm.job_id);
  bind(stmt, "slurm_step_id", run.slurm.step_id);
  bind(stmt, "slurm_rank", run.slurm.rank);
  bind(stmt, "slurm_local_rank", run.slurm.local_rank);
  bind(stmt, "slurm_node_id", run.slurm.node_id);
  bind(stmt, "slurm_node_name", run.slurm.node_name);
  bind(stmt, "slurm_ntasks", run.slurm.ntasks);
  bind(stmt, "slurm_step_gpus", run.slurm.step_gpus);
  bind(stmt, "samples_taken", std::optional<std::int64_t>());
  bind(stmt, "deadlines_missed", std::optional<std::int64_t>());
  bind(stmt, "problems", std::string("[]"));
  bind(stmt, "launcher", run.ranks.launcher);
  bind(stmt, "launcher_job_id", run.ranks.job_id);
  bind(stmt, "rank", run.ranks.rank);
  bind(stmt, "local_rank", run.ranks.local_rank);
  bind(stmt, "world_size", run.ranks.world_size);
  bind(stmt, "local_world_size", run.ranks.local_world_size);
  bind(stmt, "node_name", run.ranks.node_name);
  bind(stmt, "pod_name", run.ranks.pod_name);
  bind(stmt, "pod_namespace", run.ranks.pod_namespace);
  bind(stmt, "origin", run.origin);
  stmt.run();
  return db.last_insert_rowid();
}

void insert_devices(Database& db, std::int64_t run_id,
                    const std::vector<DeviceDescription>& devices) {
  Statement stmt = db.prepare(insert_sql("devices", device_columns()));
  for (const auto& d : devices) {
    const auto capabilities = capabilities_json(d.capabilities);
    bind(stmt, "run_id", run_id);
    bind(stmt, "device_index", std::int64_t{d.index});
    bind(stmt, "uuid", d.uuid);
    bind(stmt, "name", d.name);
    bind(stmt, "pci_bus_id", d.pci_bus_id);
    bind(stmt, "architecture", d.architecture);
    bind(stmt, "compute_capability", d.compute_capability);
    bind(stmt, "memory_total_bytes", d.memory_total_bytes);
    bind(stmt, "power_limit_w", d.power_limit_w);
    bind(stmt, "enforced_power_limit_w", d.enforced_power_limit_w);
    bind(stmt, "default_power_limit_w", d.default_power_limit_w);
    bind(stmt, "min_power_limit_w", d.min_power_limit_w);
    bind(stmt, "max_power_limit_w", d.max_power_limit_w);
    bind(stmt, "max_sm_clock_mhz", d.max_sm_clock_mhz);
    bind(stmt, "max_memory_clock_mhz", d.max_memory_clock_mhz);
    bind(stmt, "max_graphics_clock_mhz", d.max_graphics_clock_mhz);
    bind(stmt, "capabilities", capabilities);
    bind(stmt, "error", d.error);
    bind(stmt, "saturation_source", d.saturation_source);
    bind(stmt, "saturation_detail", d.saturation_detail);
    bind_mig(stmt, d);
    bind(stmt, "vendor", std::optional<std::string>(vendor_word(d.vendor)));
    bind(stmt, "vendor_index", opt_int64(d.vendor_index));
    stmt.run();
  }
}

void update_run_end(Database& db, std::int64_t run_id, const RunEnd& end) {
  Statement stmt = db.prepare(
      "UPDATE runs SET end_wall_ns = :end_wall_ns, end_time = :end_time, end_mono_ns = "
      ":end_mono_ns, status = :status, exit_code = :exit_code, term_signal = :term_signal, "
      "samples_taken = :samples_taken, deadlines_missed = :deadlines_missed, problems = "
      ":problems WHERE run_id = :run_id");
  const auto end_time = iso8601(end.end_wall_ns);
  const auto problems = to_json_array(end.problems);
  bind(stmt, "end_wall_ns", end.end_wall_ns);
  bind(stmt, "end_time", end_time);
  bind(stmt, "end_mono_ns", end.end_mono_ns);
  bind(stmt, "status", std::string(status_text(end.status)));
  bind(stmt, "exit_code", end.exit_code);
  bind(stmt, "term_signal", end.term_signal);
  bind(stmt, "samples_taken", end.samples_taken);
  bind(stmt, "deadlines_missed", end.deadlines_missed);
  bind(stmt, "problems", problems);
  bind(stmt, "run_id", run_id);
  stmt.run();
}

std::string select_runs_sql(Database& db) {
  return "SELECT run_id, " + select_list(db, "runs", run_columns()) + " FROM runs";
}

StoredRun read_run(const Statement& row) {
  const auto cols = run_columns();
  auto at = [&](std::string_view name) { return column(cols, name); };
  StoredRun out;
  out.run_id = row.int64(0);
  RunInfo& info = out.info;
  info.command = from_json_array(row.text(at("command")));
  info.label = row.text(at("label"));
  info.host = row.text(at("host"));
  info.user = row.text(at("user"));
  info.start_wall_ns = row.int64(at("start_wall_ns"));
  info.start_mono_ns = row.int64(at("start_mono_ns"));
  info.tool_version = row.text(at("tool_version"));
  info.sampling_interval_ns = ms_to_ns(row.real(at("sampling_interval_ms")));
  info.power_sampling_interval_ns = ms_to_ns(row.real(at("power_sampling_interval_ms")));
  info.scenario = row.opt_text(at("scenario"));
  info.driver_version = row.opt_text(at("driver_version"));
  info.cuda_visible_devices = row.opt_text(at("cuda_visible_devices"));
  info.slurm.job_id = row.opt_text(at("slurm_job_id"));
  info.slurm.step_id = row.opt_text(at("slurm_step_id"));
  info.slurm.rank = opt_int(row, at("slurm_rank"));
  info.slurm.local_rank = opt_int(row, at("slurm_local_rank"));
  info.slurm.node_id = opt_int(row, at("slurm_node_id"));
  info.slurm.node_name = row.opt_text(at("slurm_node_name"));
  info.slurm.ntasks = opt_int(row, at("slurm_ntasks"));
  info.slurm.step_gpus = row.opt_text(at("slurm_step_gpus"));
  info.ranks.launcher = row.opt_text(at("launcher"));
  info.ranks.job_id = row.opt_text(at("launcher_job_id"));
  info.ranks.rank = opt_int(row, at("rank"));
  info.ranks.local_rank = opt_int(row, at("local_rank"));
  info.ranks.world_size = opt_int(row, at("world_size"));
  info.ranks.local_world_size = opt_int(row, at("local_world_size"));
  info.ranks.node_name = row.opt_text(at("node_name"));
  info.ranks.pod_name = row.opt_text(at("pod_name"));
  info.ranks.pod_namespace = row.opt_text(at("pod_namespace"));
  info.origin = row.opt_text(at("origin"));
  if (!info.ranks.active() && info.slurm.active()) {
    // A file from before schema 1.3 knew only SLURM's ranks.
    info.ranks.launcher = "slurm";
    info.ranks.job_id = info.slurm.job_id;
    info.ranks.rank = info.slurm.rank;
    info.ranks.local_rank = info.slurm.local_rank;
    info.ranks.world_size = info.slurm.ntasks;
    info.ranks.node_name = info.slurm.node_name;
  }

  RunEnd& end = out.end;
  end.status = parse_status(row.text(at("status"))).value_or(RunStatus::Running);
  end.end_wall_ns = row.opt_int64(at("end_wall_ns")).value_or(0);
  end.end_mono_ns = row.opt_int64(at("end_mono_ns")).value_or(0);
  end.exit_code = opt_int(row, at("exit_code"));
  end.term_signal = opt_int(row, at("term_signal"));
  end.samples_taken = row.opt_int64(at("samples_taken")).value_or(0);
  end.deadlines_missed = row.opt_int64(at("deadlines_missed")).value_or(0);
  end.problems = from_json_array(row.text(at("problems")));
  return out;
}

std::string select_devices_sql(Database& db) {
  return "SELECT run_id, " + select_list(db, "devices", device_columns()) + " FROM devices";
}

namespace {

// A device's stored vendor word; NULL is a file from before 1.11, all of whose GPUs were NVIDIA's.
Vendor read_vendor(const std::optional<std::string>& word, unsigned index) {
  if (!word) return Vendor::Nvidia;
  if (auto vendor = parse_vendor(*word)) return *vendor;
  throw Error(fmt::format("GPU {} of this run database is of vendor \"{}\", which this gpuscope "
                          "does not know",
                          index, *word),
              "a newer gpuscope wrote it", "read it with that gpuscope or a newer one");
}

}  // namespace

DeviceDescription read_device(const Statement& row) {
  const auto cols = device_columns();
  auto at = [&](std::string_view name) { return column(cols, name); };
  DeviceDescription d;
  d.index = static_cast<unsigned>(row.int64(at("device_index")));
  d.uuid = row.opt_text(at("uuid"));
  d.name = row.opt_text(at("name"));
  d.pci_bus_id = row.opt_text(at("pci_bus_id"));
  d.architecture = row.opt_text(at("architecture"));
  d.compute_capability = row.opt_text(at("compute_capability"));
  if (auto bytes = row.opt_int64(at("memory_total_bytes"))) {
    d.memory_total_bytes = static_cast<std::uint64_t>(*bytes);
  }
  d.power_limit_w = row.opt_real(at("power_limit_w"));
  d.enforced_power_limit_w = row.opt_real(at("enforced_power_limit_w"));
  d.default_power_limit_w = row.opt_real(at("default_power_limit_w"));
  d.min_power_limit_w = row.opt_real(at("min_power_limit_w"));
  d.max_power_limit_w = row.opt_real(at("max_power_limit_w"));
  d.max_sm_clock_mhz = opt_unsigned(row, at("max_sm_clock_mhz"));
  d.max_memory_clock_mhz = opt_unsigned(row, at("max_memory_clock_mhz"));
  d.max_graphics_clock_mhz = opt_unsigned(row, at("max_graphics_clock_mhz"));
  d.capabilities = parse_capabilities(row.text(at("capabilities")));
  d.error = row.opt_text(at("error"));
  d.saturation_source = row.opt_text(at("saturation_source"));
  d.saturation_detail = row.opt_text(at("saturation_detail"));
  if (auto enabled = row.opt_int64(at("mig_enabled"))) d.mig_enabled = *enabled != 0;
  d.mig = read_mig(row, at);
  d.vendor = read_vendor(row.opt_text(at("vendor")), d.index);
  d.vendor_index = opt_unsigned(row, at("vendor_index"));
  return d;
}

}  // namespace gpuscope::store
