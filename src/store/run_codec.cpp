#include "store/run_codec.hpp"

#include <array>
#include <nlohmann/json.hpp>
#include <utility>

namespace gpuscope::store {
namespace {

constexpr std::array<std::pair<RunStatus, std::string_view>, 5> kStatusWords = {{
    {RunStatus::Running, "running"},
    {RunStatus::Finished, "finished"},
    {RunStatus::Signaled, "signaled"},
    {RunStatus::TimedOut, "timed_out"},
    {RunStatus::NotStarted, "not_started"},
}};

}  // namespace

std::string_view status_text(RunStatus status) {
  for (const auto& [value, word] : kStatusWords) {
    if (value == status) return word;
  }
  return "running";
}

std::optional<RunStatus> parse_status(std::string_view text) {
  for (const auto& [value, word] : kStatusWords) {
    if (word == text) return value;
  }
  return std::nullopt;
}

std::string_view stream_text(OutputStream stream) {
  return stream == OutputStream::Stderr ? "stderr" : "stdout";
}

std::string to_json_array(const std::vector<std::string>& items) {
  // Replace invalid UTF-8 rather than throw: argv and messages are arbitrary bytes.
  return nlohmann::json(items).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<std::string> from_json_array(const std::string& text) {
  const auto json = nlohmann::json::parse(text, nullptr, false);
  std::vector<std::string> out;
  if (!json.is_array()) return out;
  for (const auto& item : json) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

std::string capabilities_json(const std::vector<Capability>& capabilities) {
  auto json = nlohmann::json::array();
  for (const auto& c : capabilities) {
    json.push_back(
        {{"key", c.key}, {"label", c.label}, {"supported", c.supported}, {"detail", c.detail}});
  }
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<Capability> parse_capabilities(const std::string& text) {
  const auto json = nlohmann::json::parse(text, nullptr, false);
  std::vector<Capability> out;
  if (!json.is_array()) return out;
  for (const auto& item : json) {
    if (!item.is_object()) continue;
    Capability c;
    c.key = item.value("key", "");
    c.label = item.value("label", "");
    c.supported = item.value("supported", false);
    c.detail = item.value("detail", "");
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace gpuscope::store
