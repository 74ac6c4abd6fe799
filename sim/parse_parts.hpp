// The pieces of the scenario parser, one file each; they throw ScenarioError.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/json_reader.hpp"
#include "sim/scenario.hpp"

namespace gpuscope::sim {

// Parses a phase list (a non-empty array of phase objects).
std::vector<Phase> parse_phase_list(const nlohmann::json& value, const std::string& pointer);

// Parses a faults object on top of base (the scenario's global faults, for a GPU). global allows
// "init_error", which is stored into init_error.
FaultSpec parse_faults(const nlohmann::json& value, const std::string& pointer,
                       const FaultSpec& base, std::optional<nvmlReturn_t>* init_error);

// Parses a faults object's "health" list, appending its steps to steps (the global ones, for a
// GPU) and sorting the whole by time, stably.
void parse_health_steps(const nlohmann::json& value, const std::string& pointer,
                        std::vector<HealthStep>& steps);

// Parses the "dcgm" object.
DcgmSpec parse_dcgm(const nlohmann::json& value, const std::string& pointer);

// What every GPU object may refer to.
struct GpuContext {
  std::uint64_t seed = 0;
  const std::vector<Phase>* default_phases = nullptr;  // top-level "phases", if any
  const std::map<std::string, std::vector<Phase>>* phase_sets = nullptr;
  const FaultSpec* global_faults = nullptr;
};

// A GPU's (or a MIG instance's) "phases": a phase list or a phase set's name; without the key
// the top-level phases.
std::vector<Phase> parse_gpu_phases(ObjectReader& gpu, const GpuContext& context);
// A GPU's (or a MIG instance's) "processes".
void parse_processes(ObjectReader& gpu, std::vector<ProcessSpec>& processes);
// A GPU's "mig" object (MIG mode, its instances), checked against the model's profiles.
void parse_mig(ObjectReader& gpu, GpuConfig& config, std::size_t index, const GpuContext& context);

GpuConfig parse_gpu(const nlohmann::json& value, const std::string& pointer, std::size_t index,
                    const GpuContext& context);

// The scenario's "amd_gpus" list (each card's GCDs as devices) and its "amd" object.
std::vector<AmdGpuConfig> parse_amd_gpus(const nlohmann::json& value, const std::string& pointer,
                                         const GpuContext& context);
AmdLibrariesSpec parse_amd_libraries(const nlohmann::json& value, const std::string& pointer);

// The default UUID and PCI bus id of GPU index under seed.
std::string default_uuid(std::uint64_t seed, std::size_t index);
std::string default_pci_bus_id(std::size_t index);

}  // namespace gpuscope::sim
