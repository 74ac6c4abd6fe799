#include "fleet/gpu_health.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "fleet/job_queries.hpp"
#include "ingest/monitoring/exporter_families.hpp"
#include "ingest/monitoring/exporter_labels.hpp"

namespace gpuscope::fleet {
namespace {

// What a health series tells.
enum class HealthField { XidLast, XidMax, XidEvents, Ecc, RemapFailure, RemapPending };

struct HealthQuery {
  std::string_view selector;  // name{matchers}
  HealthField field;
  // last: the value at the window's end; increase: a counter's rise, its resets (an exporter
  // restarted) not counted as faults; otherwise reduce_expr's.
  enum class How { Last, Increase, Reduced } how;
  Reduce reduce = Reduce::Max;
};

using How = HealthQuery::How;
// gpuscope serve's names and dcgm-exporter's (serve --naming dcgm sends the same). serve's Xid
// counter restarts with serve: its increase, not its rise. DCGM keeps the last Xid in the host
// engine, which outlives the exporter: its changes are events.
constexpr HealthQuery kQueries[] = {
    {"gpuscope_gpu_xid_last", HealthField::XidLast, How::Last},
    {"gpuscope_gpu_xid_last", HealthField::XidMax, How::Reduced, Reduce::Max},
    {"gpuscope_gpu_xid_errors_total", HealthField::XidEvents, How::Increase},
    {R"(gpuscope_gpu_ecc_errors_total{type="uncorrected",counter="volatile"})", HealthField::Ecc,
     How::Reduced, Reduce::Rise},
    {"gpuscope_gpu_row_remap_failure", HealthField::RemapFailure, How::Reduced, Reduce::Max},
    {"gpuscope_gpu_row_remap_pending", HealthField::RemapPending, How::Reduced, Reduce::Max},
    {"DCGM_FI_DEV_XID_ERRORS", HealthField::XidLast, How::Last},
    {"DCGM_FI_DEV_XID_ERRORS", HealthField::XidMax, How::Reduced, Reduce::Max},
    {"DCGM_FI_DEV_XID_ERRORS", HealthField::XidEvents, How::Reduced, Reduce::Changes},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", HealthField::Ecc, How::Reduced, Reduce::Rise},
    {"DCGM_FI_DEV_ROW_REMAP_FAILURE", HealthField::RemapFailure, How::Reduced, Reduce::Max},
    {"DCGM_FI_DEV_ROW_REMAP_PENDING", HealthField::RemapPending, How::Reduced, Reduce::Max},
};

std::optional<double>& field_of(GpuHealth& g, HealthField f) {
  switch (f) {
    case HealthField::XidLast:
      return g.xid_last;
    case HealthField::XidMax:
      return g.xid_max;
    case HealthField::XidEvents:
      return g.xid_events;
    case HealthField::Ecc:
      return g.uncorrected_ecc;
    case HealthField::RemapFailure:
      return g.remap_failure;
    case HealthField::RemapPending:
      break;
  }
  return g.remap_pending;
}

// A GPU's entry, and what its utilization series said.
struct HealthEntry {
  GpuHealth health;
  double samples = 0;         // within the window
  double recent_samples = 0;  // within its last part
};

class HealthReader {
 public:
  HealthReader(tsdb::Source& source, const HealthWindow& w, const std::vector<std::string>& nodes)
      : source_(source),
        nodes_(nodes),
        whole_(span_text(w.from_ms, w.to_ms, 0)),
        recent_(span_text(w.recent_from_ms, w.to_ms, 0)),
        at_ms_(whole_.at_ms) {}

  void ask(const HealthQuery& q) {
    const std::string sel(q.selector);
    std::string expr;
    if (q.how == How::Last) {
      expr = fmt::format("max by ({}) (last_over_time({}[{}] {}))", kGpuLabels, sel, whole_.range,
                         whole_.at);
    } else if (q.how == How::Increase) {
      expr = fmt::format("sum by ({}) (increase({}[{}] {}))", kGpuLabels, sel, whole_.range,
                         whole_.at);
    } else {
      expr = reduce_expr({q.reduce}, sel, whole_);
    }
    take(expr, [&](HealthEntry& e, double v) {
      auto& slot = field_of(e.health, q.field);
      slot = slot ? std::max(*slot, v) : v;
    });
  }

  // Which GPUs report: their utilization samples in the window and in its last part.
  void ask_reporting() {
    for (const ingest::ExportedName& n : ingest::exported_names()) {
      if (n.metric != Metric::GpuUtilPct) continue;
      const std::string sel(n.name);
      take(reduce_expr({Reduce::Count}, sel, whole_),
           [](HealthEntry& e, double v) { e.samples += v; });
      take(reduce_expr({Reduce::Count}, sel, recent_),
           [](HealthEntry& e, double v) { e.recent_samples += v; });
    }
  }

  std::vector<GpuHealth> result() {
    std::vector<GpuHealth> out;
    for (auto& [key, e] : entries_) {
      e.health.reporting = !(e.samples > 0 && e.recent_samples <= 0);
      out.push_back(std::move(e.health));
    }
    return out;
  }

 private:
  template <typename Take>
  void take(const std::string& expr, Take put) {
    for (const auto& series : source_.instant(expr, at_ms_)) {
      if (series.points.empty() || !std::isfinite(series.points.back().value)) continue;
      const std::string node = nodes_.node_of(series.labels);
      const std::string gpu = ingest::whole_gpu_key(series.labels, node);
      auto [it, added] = entries_.try_emplace({node, gpu});
      if (added) {
        it->second.health.node = node;
        it->second.health.gpu = gpu;
      }
      put(it->second, series.points.back().value);
    }
  }

  tsdb::Source& source_;
  ingest::NodeIndex nodes_;
  JobWindowText whole_, recent_;
  std::int64_t at_ms_;
  std::map<std::pair<std::string, std::string>, HealthEntry> entries_;
};

}  // namespace

std::vector<GpuHealth> read_gpu_health(tsdb::Source& source, const HealthWindow& window,
                                       const std::vector<std::string>& nodes) {
  HealthReader reader(source, window, nodes);
  for (const HealthQuery& q : kQueries) reader.ask(q);
  reader.ask_reporting();
  return reader.result();
}

}  // namespace gpuscope::fleet
