#include "report/health_view.hpp"

#include <fmt/format.h>

#include "core/xid_catalog.hpp"
#include "util/text_table.hpp"

namespace gpuscope::report {
namespace {

using analyze::Analysis;
using analyze::GpuHealth;

std::string count_text(std::optional<double> n) {
  return n ? fmt::format("{:.0f}", *n) : "-";
}

std::optional<double> sum(std::initializer_list<std::optional<double>> parts) {
  std::optional<double> total;
  for (const auto& part : parts) {
    if (part) total = total.value_or(0) + *part;
  }
  return total;
}

std::size_t xids_on(const Analysis& a, const std::string& gpu) {
  std::size_t n = 0;
  for (const auto& e : a.health.events) n += e.kind == EventKind::Xid && e.gpu == gpu ? 1u : 0u;
  return n;
}

std::string xid_list(const Analysis& a, const std::string& gpu) {
  std::string out;
  for (const auto& e : a.health.events) {
    if (e.kind != EventKind::Xid || e.gpu != gpu) continue;
    const auto xid = xid_from_title(e.detail);
    const std::string word = xid ? std::to_string(*xid) : "?";
    if (out.find(word) == std::string::npos) out += (out.empty() ? "" : ",") + word;
  }
  return out.empty() ? "-" : out;
}

std::string flag_text(const GpuHealth& g) {
  std::string out;
  if (g.at_end(HealthMetric::RowRemapPending).value_or(0) > 0) out += "remap pending ";
  if (g.at_end(HealthMetric::RowRemapFailure).value_or(0) > 0) out += "remap failed ";
  if (g.at_end(HealthMetric::RetiredPagesPending).value_or(0) > 0) out += "retirement pending ";
  if (!out.empty()) out.pop_back();
  return out.empty() ? "-" : out;
}

std::vector<std::string> health_row(const Analysis& a, const GpuHealth& g) {
  using M = HealthMetric;
  return {
      g.gpu,
      xid_list(a, g.gpu),
      count_text(g.rise(M::EccCorrectedVolatile) ? g.rise(M::EccCorrectedVolatile)
                                                 : g.rise(M::EccCorrectedAggregate)),
      count_text(g.rise(M::EccUncorrectedVolatile) ? g.rise(M::EccUncorrectedVolatile)
                                                   : g.rise(M::EccUncorrectedAggregate)),
      count_text(sum({g.rise(M::RemappedRowsCorrectable), g.rise(M::RemappedRowsUncorrectable)})),
      count_text(g.rise(M::PcieReplays)),
      count_text(sum({g.rise(M::NvlinkCrcFlitErrors), g.rise(M::NvlinkCrcDataErrors),
                      g.rise(M::NvlinkReplayErrors), g.rise(M::NvlinkRecoveryErrors)})),
      flag_text(g)};
}

// Whether a row says anything: a number above 0, an Xid, a flag.
bool worth_showing(const std::vector<std::string>& row) {
  for (std::size_t k = 1; k < row.size(); ++k) {
    if (row[k] != "-" && row[k] != "0") return true;
  }
  return false;
}

nlohmann::json metrics_json(const GpuHealth& g, bool rise) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& info : kHealthMetrics) {
    // Flags and gauges have no meaningful rise: only their state at the end.
    if (rise && info.kind != HealthKind::Counter) continue;
    const auto value = rise ? g.rise(info.id) : g.at_end(info.id);
    if (value) out[std::string(info.name)] = *value;
  }
  return out;
}

}  // namespace

std::string health_text(const Analysis& a, bool color) {
  if (a.health.empty()) return "";
  const auto bold = [color](const std::string& s) { return color ? "\033[1m" + s + "\033[0m" : s; };
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : a.health.gpus) {
    auto row = health_row(a, g);
    if (worth_showing(row)) rows.push_back(std::move(row));
  }
  // GPUs with Xids but no health samples (an older gpuscope, an imported log).
  for (const auto& e : a.health.events) {
    bool listed = false;
    for (const auto& row : rows) listed = listed || row.front() == e.gpu;
    if (!listed && e.kind == EventKind::Xid) {
      rows.push_back({e.gpu, xid_list(a, e.gpu), "-", "-", "-", "-", "-", "-"});
    }
  }
  if (rows.empty()) {
    return fmt::format(
        "\n{} no Xid, ECC error, row remap, PCIe replay or NVLink error on the {} "
        "GPU{} during the run\n",
        bold("GPU health:"), a.health.gpus.size(), a.health.gpus.size() == 1 ? "" : "s");
  }
  const auto text = util::render_table({"GPU", "Xids", "ECC corr.", "ECC uncorr.", "rows remapped",
                                        "PCIe replays", "NVLink errors", "at the end"},
                                       rows, {{util::Align::Left, util::Align::Left}, false});
  return "\n" + bold("GPU health (during the run)") + "\n" + bold(text.header) + text.body;
}

nlohmann::json health_json(const Analysis& a) {
  nlohmann::json events = nlohmann::json::array();
  for (const auto& e : a.health.events) {
    nlohmann::json event = {
        {"gpu", e.gpu}, {"t_s", e.t_s}, {"kind", std::string(e.kind.text())}, {"detail", e.detail}};
    if (const auto xid = xid_from_title(e.detail); xid && e.kind == EventKind::Xid) {
      event["xid"] = *xid;
    }
    events.push_back(std::move(event));
  }
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : a.health.gpus) {
    gpus.push_back({{"gpu", g.gpu},
                    {"first_s", g.first_t_s},
                    {"last_s", g.last_t_s},
                    {"xids", xids_on(a, g.gpu)},
                    {"during_run", metrics_json(g, true)},
                    {"at_end", metrics_json(g, false)}});
  }
  return {{"events", events}, {"gpus", gpus}};
}

}  // namespace gpuscope::report
