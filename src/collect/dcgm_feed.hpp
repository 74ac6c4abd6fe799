// The DCGM side of sampling (docs/sources.md): one DCGM session, and per GPU a watch of the
// profiling fields mapped onto gpuscope's saturation metrics, for the GPUs that take them from
// DCGM rather than GPM (Volta and Ampere, or on request).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/metrics.hpp"
#include "core/run.hpp"
#include "dcgm/fields.hpp"
#include "dcgm/session.hpp"

namespace gpuscope::collect {

// A DCGM field gpuscope records and the catalog metric it fills (dcgm/fields.hpp).
using DcgmMapping = dcgm::FieldMapping;

// Every field gpuscope asks DCGM for, in the order watched.
std::span<const DcgmMapping> dcgm_mappings();

// The fields the GPU's metric groups can give in one pass of the counters, and those left out:
// per major group, the minor group that covers most of `wanted` (DCGM multiplexes on its own on
// most GPUs; this is the fallback when it answers PROFILING_MULTI_PASS).
struct SinglePass {
  std::vector<unsigned short> fields;
  std::vector<unsigned short> left_out;
};
SinglePass single_pass(const std::vector<dcgm::MetricGroup>& groups,
                       const std::vector<unsigned short>& wanted);

// Words for a set of profiling fields: "FP64 activity, FP16 activity".
std::string describe_fields(const std::vector<unsigned short>& fields);

class DcgmFeed {
 public:
  explicit DcgmFeed(std::unique_ptr<dcgm::Session> session) : session_(std::move(session)) {}
  ~DcgmFeed();
  DcgmFeed(const DcgmFeed&) = delete;
  DcgmFeed& operator=(const DcgmFeed&) = delete;

  const dcgm::Session& session() const { return *session_; }

  // The DCGM GPU id of the GPU with this UUID; nullopt when DCGM does not list it.
  std::optional<unsigned> gpu_id(const std::string& uuid);
  // The profiling fields gpuscope maps that the GPU offers, or why none.
  dcgm::Expected<std::vector<unsigned short>> offered(unsigned gpu_id) const;

  // Watches GPU `gpu_id` (NVML index `index`) every `interval`. Returns "" or why the GPU gets no
  // saturation metrics from DCGM; `notes` receives what was left out and why.
  std::string start(unsigned index, unsigned gpu_id, std::chrono::microseconds interval,
                    std::vector<std::string>& notes);

  // A MIG device to watch through its GPU instance's DCGM entity (docs/mig.md).
  struct InstanceWanted {
    unsigned row_index = 0;        // its row index (core/mig.hpp)
    unsigned gpu_instance_id = 0;  // NVML's
    std::string label;             // "GPU 0 GI 1 (3g.40gb)"
  };
  // Watches the GPU instance entities (DCGM_FE_GPU_I) of `wanted`, all on the GPU of DCGM GPU id
  // `gpu_id`, in one watch, for the profiling fields DCGM keeps per instance (1001-1008 and
  // 1013-1016; PCIe and NVLink are the GPU's). Returns, parallel to `wanted`, "" or why that
  // instance gets no saturation metrics from DCGM; `notes` as for start().
  std::vector<std::string> start_instances(unsigned gpu_id,
                                           const std::vector<InstanceWanted>& wanted,
                                           std::chrono::microseconds interval,
                                           std::vector<std::string>& notes);

  // Fills `row` with the GPU's latest values: profiling fields only when DCGM has a newer
  // sample than the last one read. Returns an event's words when the counters went away or came
  // back, or when DCGM stopped answering. Main sampling thread only.
  // `index` is a GPU's NVML index or a MIG device's row index.
  std::optional<std::string> read(unsigned index, SampleRow& row, unsigned& failed_calls);

 private:
  // One watched entity: a GPU, or a MIG device's GPU instance (whose watch is shared with the
  // other instances of its GPU).
  struct Gpu {
    dcgmGroupEntityPair_t entity{dcgm::kEntityGpu, 0};
    std::string label;  // "GPU 0", "MIG device GPU 0 GI 1 (3g.40gb)"
    std::shared_ptr<dcgm::Watch> watch;
    std::vector<dcgmFieldValue_v2> values;
    std::int64_t last_ts = 0;    // of the newest profiling sample read
    bool counters_gone = false;  // the profiling fields came back blank
    bool call_failed = false;    // the last read failed
    bool instance = false;       // a GPU instance: its ratios are fractions of it, at most 1
  };

  std::unique_ptr<dcgm::Session> session_;
  std::optional<std::map<std::string, unsigned>> uuids_;
  // Watches `fields` (a multi-pass refusal falls back to one pass, with a note naming `who`).
  dcgm::Expected<std::unique_ptr<dcgm::Watch>> watch(
      const std::vector<dcgmGroupEntityPair_t>& entities,
      const std::vector<dcgm::MetricGroup>& groups, const std::vector<unsigned short>& prof,
      const std::vector<unsigned short>& device, std::chrono::microseconds interval,
      const std::string& who, std::vector<std::string>& notes);
  std::string refusal(const dcgm::Failure& failure) const;

  std::map<unsigned, Gpu> gpus_;  // by NVML index, or a MIG device's row index
};

}  // namespace gpuscope::collect
