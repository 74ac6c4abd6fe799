#include <string>

#include "sim/json_reader.hpp"
#include "sim/parse_parts.hpp"

namespace gpuscope::sim {
namespace {

Phase parse_phase(const nlohmann::json& value, const std::string& pointer) {
  ObjectReader reader(value, pointer);
  Phase phase;
  const std::optional<std::string> name = reader.optional_string("name");
  if (!name || name->empty()) fail_at(pointer, "every phase needs a non-empty \"name\"");
  phase.name = *name;
  phase.duration_s = reader.required_number("duration_s", kPositive);
  phase.ramp_s = reader.number("ramp_s", 0, kNonNegative);
  if (phase.ramp_s > phase.duration_s) {
    fail_at(reader.child("ramp_s"), format_number(phase.ramp_s) + " must be <= duration_s (" +
                                        format_number(phase.duration_s) + ")");
  }
  for (std::size_t i = 0; i < kActivityCount; ++i) {
    const Range range = is_percentage(static_cast<Activity>(i)) ? kPercent : kNonNegative;
    phase.levels[i] = reader.number(kActivityKeys[i], 0, range);
  }
  phase.memory_used_gib = reader.number("memory_used_gib", 0, kNonNegative);
  phase.power_w = reader.optional_number("power_w", kPositive);
  phase.compute_bound = reader.number("compute_bound", phase.compute_bound, {0, 1});
  phase.noise = reader.number("noise", phase.noise, {0, 0.5});
  reader.finish();
  return phase;
}

constexpr std::size_t kMaxPhases = 10000;

void append_phases(const nlohmann::json& value, const std::string& pointer,
                   std::vector<Phase>& phases);

// {"repeat": N, "phases": [...]} stands for its phases N times over (training steps, epochs).
void append_repeat(const nlohmann::json& value, const std::string& pointer,
                   std::vector<Phase>& phases) {
  ObjectReader reader(value, pointer);
  const auto times = reader.unsigned_integer("repeat", 0, kMaxPhases);
  if (times == 0) fail_at(reader.child("repeat"), "must be at least 1");
  const nlohmann::json* body = reader.find("phases");
  if (body == nullptr) fail_at(pointer, "a repeat block needs \"phases\"");
  reader.finish();
  std::vector<Phase> once;
  append_phases(*body, reader.child("phases"), once);
  if (phases.size() + times * once.size() > kMaxPhases) {
    fail_at(pointer, "expands past " + std::to_string(kMaxPhases) + " phases");
  }
  for (std::uint64_t i = 0; i < times; ++i) phases.insert(phases.end(), once.begin(), once.end());
}

void append_phases(const nlohmann::json& value, const std::string& pointer,
                   std::vector<Phase>& phases) {
  if (!value.is_array()) {
    fail_at(pointer, "expected an array of phases, got " + std::string(value.type_name()));
  }
  if (value.empty()) fail_at(pointer, "a phase list needs at least one phase");
  for (std::size_t i = 0; i < value.size(); ++i) {
    const std::string child = pointer + "/" + std::to_string(i);
    if (value[i].is_object() && value[i].contains("repeat")) {
      append_repeat(value[i], child, phases);
    } else {
      phases.push_back(parse_phase(value[i], child));
    }
  }
}

}  // namespace

std::vector<Phase> parse_phase_list(const nlohmann::json& value, const std::string& pointer) {
  std::vector<Phase> phases;
  append_phases(value, pointer, phases);
  return phases;
}

}  // namespace gpuscope::sim
