#include <string>

#include "sim/json_reader.hpp"
#include "sim/parse_parts.hpp"

namespace gpuscope::sim {
namespace {

// An address as dcgmConnect_v2 takes it: "host", "host:port", or "unix:PATH" for a socket.
std::string parse_address(const nlohmann::json& value, const std::string& pointer) {
  if (value.is_boolean()) {
    if (!value.get<bool>()) fail_at(pointer, "give an address, true (localhost:5555) or omit it");
    return "localhost:5555";
  }
  if (!value.is_string() || value.get_ref<const std::string&>().empty() ||
      value.get_ref<const std::string&>().size() > 255) {
    fail_at(pointer, "expected true or an address such as \"localhost:5555\" or \"unix:/run/x\"");
  }
  return value.get<std::string>();
}

std::vector<CountersTaken> parse_windows(const nlohmann::json& value, const std::string& pointer) {
  if (!value.is_array() || value.size() > 1000) {
    fail_at(pointer, "expected a list of at most 1000 {\"from_s\": ..., \"to_s\": ...}");
  }
  std::vector<CountersTaken> windows;
  for (std::size_t i = 0; i < value.size(); ++i) {
    ObjectReader window(value[i], pointer + "/" + std::to_string(i));
    CountersTaken taken;
    taken.from_s = window.required_number("from_s", kNonNegative);
    taken.to_s = window.required_number("to_s", kNonNegative);
    if (taken.to_s <= taken.from_s) fail_at(window.child("to_s"), "must be after from_s");
    window.finish();
    windows.push_back(taken);
  }
  return windows;
}

}  // namespace

DcgmSpec parse_dcgm(const nlohmann::json& value, const std::string& pointer) {
  ObjectReader reader(value, pointer);
  DcgmSpec spec;
  if (const nlohmann::json* address = reader.find("hostengine")) {
    spec.hostengine = parse_address(*address, reader.child("hostengine"));
  }
  spec.embedded = reader.boolean("embedded", true);
  const std::string profiling = reader.string("profiling", "ok");
  if (profiling == "ok") {
    spec.profiling = DcgmProfiling::Ok;
  } else if (profiling == "module_missing") {
    spec.profiling = DcgmProfiling::ModuleMissing;
  } else if (profiling == "unsupported") {
    spec.profiling = DcgmProfiling::Unsupported;
  } else {
    fail_at(reader.child("profiling"), "expected \"ok\", \"module_missing\" or \"unsupported\"");
  }
  spec.multipass = reader.boolean("multipass", false);
  spec.refuse_field_groups = reader.boolean("refuse_field_groups", false);
  if (reader.has("metric_groups_answers")) {
    spec.metric_groups_answers = reader.unsigned_integer("metric_groups_answers", 0, 1'000'000);
  }
  if (const nlohmann::json* windows = reader.find("counters_taken")) {
    spec.counters_taken = parse_windows(*windows, reader.child("counters_taken"));
  }
  reader.finish();
  return spec;
}

}  // namespace gpuscope::sim
