// The kernel lanes of the HTML report (docs/report.md, "Kernels"): per GPU, the kernels of a
// `profile --trace-kernels` run as slices under the metric timelines. Bounded: up to
// kMaxKernelSlices kernels are embedded one by one; beyond that each GPU's lane is aggregated
// into time bins (kernel time per bin, kernel count, the longest kernel), and the report says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpuscope::report {

inline constexpr std::size_t kMaxKernelSlices = 50'000;
inline constexpr std::size_t kKernelBins = 2000;

// Built from a stream of kernels: the caller says up front how many there are (which decides
// slices or bins), then adds them in any order.
class KernelLanes {
 public:
  // `total_kernels`: how many add() calls will come (kernels on sampled GPUs); `duration_s`: the
  // time axis of the report (bins cover [0, duration_s]); `gpus`: the report's GPU count.
  KernelLanes(std::size_t total_kernels, double duration_s, std::size_t gpus);

  // A kernel name (demangled); returns its index for add().
  std::size_t name(const std::string& demangled);
  // A kernel on GPU `gpu` (index into the report's GPUs) starting `start_ns` after the report's
  // t0, lasting `duration_ns`.
  void add(std::size_t gpu, std::int64_t start_ns, std::int64_t duration_ns, std::size_t name);
  // Kernels gpuscope did not draw because they ran on GPUs it did not sample.
  void add_unsampled(std::int64_t count) { unsampled_ += count; }

  bool binned() const { return binned_; }
  // The "kernels" object of the report's data (shape in docs/report.md).
  nlohmann::json to_json() const;

 private:
  struct Lane {
    std::vector<std::int64_t> start_ns;  // slices
    std::vector<std::int64_t> duration_ns;
    std::vector<std::uint32_t> name;
    std::vector<double> busy_ns;  // bins: kernel time inside each bin
    std::vector<std::uint32_t> count;
    std::vector<std::int64_t> longest_ns;
    std::vector<std::uint32_t> longest_name;
    std::size_t kernels = 0;
  };

  std::size_t total_;
  double duration_s_;
  bool binned_;
  double bin_ns_ = 0;
  std::vector<Lane> lanes_;
  std::vector<std::string> names_;
  std::vector<std::pair<std::string, std::size_t>> name_index_;  // sorted lookup
  std::int64_t unsampled_ = 0;
};

}  // namespace gpuscope::report
