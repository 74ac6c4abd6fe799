#include <array>
#include <string>
#include <utility>

#include "sim/json_reader.hpp"
#include "sim/parse_parts.hpp"

namespace gpuscope::sim {
namespace {

// Error names accepted by "init_error", with or without the NVML_ERROR_ prefix.
constexpr std::array<std::pair<std::string_view, nvmlReturn_t>, 9> kInitErrors = {{
    {"UNINITIALIZED", nvml::kErrorUninitialized},
    {"NO_PERMISSION", nvml::kErrorNoPermission},
    {"NOT_FOUND", nvml::kErrorNotFound},
    {"DRIVER_NOT_LOADED", nvml::kErrorDriverNotLoaded},
    {"TIMEOUT", nvml::kErrorTimeout},
    {"LIBRARY_NOT_FOUND", nvml::kErrorLibraryNotFound},
    {"GPU_IS_LOST", nvml::kErrorGpuIsLost},
    {"ARGUMENT_VERSION_MISMATCH", nvml::kErrorArgumentVersionMismatch},
    {"UNKNOWN", nvml::kErrorUnknown},
}};

nvmlReturn_t parse_init_error(const nlohmann::json& value, const std::string& pointer) {
  if (value.is_number_integer()) {
    const auto code = value.get<long long>();
    if (code <= 0 || code > 999) fail_at(pointer, "an error code must be in 1..999");
    return static_cast<nvmlReturn_t>(code);
  }
  if (!value.is_string()) fail_at(pointer, "expected an error name or code, got " + value.dump());
  std::string_view name = value.get_ref<const std::string&>();
  if (name.starts_with("NVML_ERROR_")) name.remove_prefix(11);
  std::string known;
  for (const auto& [candidate, code] : kInitErrors) {
    if (candidate == name) return code;
    known += " " + std::string(candidate);
  }
  fail_at(pointer, "unknown error name " + value.dump() + " (known:" + known + ")");
}

Entry parse_entry_name(const nlohmann::json& value, const std::string& pointer) {
  if (!value.is_string()) fail_at(pointer, "expected an NVML function name, got " + value.dump());
  const std::string& name = value.get_ref<const std::string&>();
  if (const std::optional<Entry> entry = find_entry(name)) return *entry;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < kEntryCount; ++i) {
    for (std::string_view symbol : entry_symbols(static_cast<Entry>(i))) {
      names.emplace_back(symbol);
    }
  }
  std::string what = "unknown NVML function \"" + name + "\"";
  if (const auto suggestion = closest_match(name, names))
    what += " (did you mean \"" + *suggestion + "\"?)";
  fail_at(pointer, what);
}

std::uint32_t latency_us(const nlohmann::json& value, const std::string& pointer) {
  const double ms = checked_number(value, pointer, {0, 10000});
  return static_cast<std::uint32_t>(ms * 1000.0 + 0.5);
}

void parse_latency(const nlohmann::json& value, const std::string& pointer, FaultSpec& faults) {
  if (!value.is_object()) fail_at(pointer, "expected an object of function name -> milliseconds");
  // "*" first, so that named entries refine it whatever the key order.
  if (const auto star = value.find("*"); star != value.end()) {
    faults.latency_us.fill(latency_us(*star, pointer + "/*"));
  }
  for (const auto& [name, ms] : value.items()) {
    if (name == "*") continue;
    const std::string child = pointer + "/" + name;
    const Entry entry = parse_entry_name(name, child);
    faults.latency_us[static_cast<std::size_t>(entry)] = latency_us(ms, child);
  }
}

}  // namespace

FaultSpec parse_faults(const nlohmann::json& value, const std::string& pointer,
                       const FaultSpec& base, std::optional<nvmlReturn_t>* init_error) {
  ObjectReader reader(value, pointer);
  FaultSpec faults = base;
  if (const auto lost = reader.optional_number("lost_at_s", kNonNegative)) faults.lost_at_s = lost;
  if (const nlohmann::json* names = reader.find("not_supported")) {
    if (!names->is_array()) fail_at(reader.child("not_supported"), "expected an array of names");
    for (std::size_t i = 0; i < names->size(); ++i) {
      const std::string child = reader.child("not_supported") + "/" + std::to_string(i);
      faults.not_supported.set(static_cast<std::size_t>(parse_entry_name((*names)[i], child)));
    }
  }
  if (const nlohmann::json* fields = reader.find("not_supported_fields")) {
    const std::string child = reader.child("not_supported_fields");
    if (!fields->is_array()) fail_at(child, "expected an array of field ids");
    for (std::size_t i = 0; i < fields->size(); ++i) {
      const double id = checked_number((*fields)[i], child + "/" + std::to_string(i), {0, 10000});
      faults.not_supported_fields.push_back(static_cast<unsigned>(id));
    }
  }
  if (const nlohmann::json* latency = reader.find("latency_ms")) {
    parse_latency(*latency, reader.child("latency_ms"), faults);
  }
  if (const nlohmann::json* health = reader.find("health")) {
    parse_health_steps(*health, reader.child("health"), faults.health);
  }
  if (init_error != nullptr) {
    if (const nlohmann::json* code = reader.find("init_error")) {
      *init_error = parse_init_error(*code, reader.child("init_error"));
    }
  }
  reader.finish();
  return faults;
}

}  // namespace gpuscope::sim
