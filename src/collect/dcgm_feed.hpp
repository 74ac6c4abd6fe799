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

  // Fills `row` with the GPU's latest values: profiling fields only when DCGM has a newer
  // sample than the last one read. Returns an event's words when the counters went away or came
  // back, or when DCGM stopped answering. Main sampling thread only.
  std::optional<std::string> read(unsigned index, SampleRow& row, unsigned& failed_calls);

 private:
  struct Gpu {
    unsigned gpu_id = 0;
    std::unique_ptr<dcgm::Watch> watch;
    std::vector<dcgmFieldValue_v2> values;
    std::int64_t last_ts = 0;    // of the newest profiling sample read
    bool counters_gone = false;  // the profiling fields came back blank
    bool call_failed = false;    // the last read failed
  };

  std::unique_ptr<dcgm::Session> session_;
  std::optional<std::map<std::string, unsigned>> uuids_;
  std::map<unsigned, Gpu> gpus_;  // by NVML index
};

}  // namespace gpuscope::collect
