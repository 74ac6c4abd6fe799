#include "report/kernel_lanes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscope::report {

using nlohmann::json;

KernelLanes::KernelLanes(std::size_t total_kernels, double duration_s, std::size_t gpus)
    : total_(total_kernels),
      duration_s_(std::max(duration_s, 1e-6)),
      binned_(total_kernels > kMaxKernelSlices),
      lanes_(gpus) {
  if (binned_) {
    bin_ns_ = duration_s_ * 1e9 / static_cast<double>(kKernelBins);
    for (Lane& lane : lanes_) {
      lane.busy_ns.assign(kKernelBins, 0);
      lane.count.assign(kKernelBins, 0);
      lane.longest_ns.assign(kKernelBins, 0);
      lane.longest_name.assign(kKernelBins, 0);
    }
  }
}

std::size_t KernelLanes::name(const std::string& demangled) {
  const auto at = std::lower_bound(name_index_.begin(), name_index_.end(), demangled,
                                   [](const std::pair<std::string, std::size_t>& e,
                                      const std::string& n) { return e.first < n; });
  if (at != name_index_.end() && at->first == demangled) return at->second;
  names_.push_back(demangled);
  name_index_.insert(at, {demangled, names_.size() - 1});
  return names_.size() - 1;
}

void KernelLanes::add(std::size_t gpu, std::int64_t start_ns, std::int64_t duration_ns,
                      std::size_t name_index) {
  if (gpu >= lanes_.size()) return;
  Lane& lane = lanes_[gpu];
  ++lane.kernels;
  duration_ns = std::max<std::int64_t>(0, duration_ns);
  const auto name = static_cast<std::uint32_t>(name_index);
  if (!binned_) {
    lane.start_ns.push_back(start_ns);
    lane.duration_ns.push_back(duration_ns);
    lane.name.push_back(name);
    return;
  }
  // The kernel's time is spread over the bins it overlaps; its count and "longest" go to the
  // bin it starts in. Kernels outside [0, duration] are clipped to the first or last bin.
  const double start = static_cast<double>(start_ns);
  const double end = start + static_cast<double>(duration_ns);
  const auto last = static_cast<double>(kKernelBins - 1);
  const auto bin_of = [&](double t) {
    return static_cast<std::size_t>(std::clamp(std::floor(t / bin_ns_), 0.0, last));
  };
  const std::size_t first_bin = bin_of(start);
  const std::size_t last_bin = bin_of(end);
  for (std::size_t b = first_bin; b <= last_bin; ++b) {
    const double lo = std::max(start, static_cast<double>(b) * bin_ns_);
    const double hi = std::min(end, static_cast<double>(b + 1) * bin_ns_);
    if (hi > lo) lane.busy_ns[b] += hi - lo;
  }
  ++lane.count[first_bin];
  if (duration_ns > lane.longest_ns[first_bin]) {
    lane.longest_ns[first_bin] = duration_ns;
    lane.longest_name[first_bin] = name;
  }
}

json KernelLanes::to_json() const {
  json lanes = json::array();
  std::size_t shown = 0;
  for (std::size_t g = 0; g < lanes_.size(); ++g) {
    const Lane& lane = lanes_[g];
    if (lane.kernels == 0) continue;
    json item = {{"gpu", g}, {"kernels", lane.kernels}};
    if (!binned_) {
      // Slices sorted by start, so the page can find the ones in view by bisection.
      std::vector<std::size_t> order(lane.start_ns.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return lane.start_ns[a] < lane.start_ns[b];
      });
      json start = json::array();
      json duration = json::array();
      json name = json::array();
      for (std::size_t i : order) {
        start.push_back(lane.start_ns[i]);
        duration.push_back(lane.duration_ns[i]);
        name.push_back(lane.name[i]);
      }
      item["start_ns"] = std::move(start);
      item["duration_ns"] = std::move(duration);
      item["name"] = std::move(name);
      shown += order.size();
    } else {
      json busy = json::array();
      for (double v : lane.busy_ns) busy.push_back(std::llround(v));
      item["busy_ns"] = std::move(busy);
      item["count"] = lane.count;
      item["longest_ns"] = lane.longest_ns;
      item["longest_name"] = lane.longest_name;
    }
    lanes.push_back(std::move(item));
  }
  json out = {{"mode", binned_ ? "bins" : "slices"},
              {"total", total_},
              {"shown", shown},
              {"unsampled", unsampled_},
              {"names", names_},
              {"lanes", std::move(lanes)}};
  if (binned_) {
    out["bins"] = kKernelBins;
    out["bin_s"] = duration_s_ / static_cast<double>(kKernelBins);
    out["note"] = fmt::format(
        "{} kernels are more than the {} the report draws one by one: each GPU's lane shows, per "
        "{:.3g} s bin, the kernel time in the bin (darker: busier), the kernel count and the "
        "longest kernel. 'gpuscope export --perfetto' keeps every kernel.",
        total_, kMaxKernelSlices, duration_s_ / static_cast<double>(kKernelBins));
  }
  return out;
}

}  // namespace gpuscope::report
