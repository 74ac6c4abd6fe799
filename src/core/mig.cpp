#include "core/mig.hpp"

#include <fmt/format.h>

#include <cctype>
#include <string_view>

namespace gpuscope {
namespace {

// Skips digits at `i`; false when there were none.
bool digits(std::string_view s, std::size_t& i) {
  const std::size_t start = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) ++i;
  return i > start;
}

bool literal(std::string_view s, std::size_t& i, std::string_view word) {
  if (s.substr(i, word.size()) != word) return false;
  i += word.size();
  return true;
}

// "[<n>c.]<n>g.<n>gb" followed by nothing, a space or a '+'/'-' suffix ("+me", "-me").
bool is_profile(std::string_view token) {
  std::size_t i = 0;
  if (!digits(token, i)) return false;
  if (literal(token, i, "c.") && !digits(token, i)) return false;
  if (!literal(token, i, "g.") || !digits(token, i) || !literal(token, i, "gb")) return false;
  return i == token.size() || token[i] == '+' || token[i] == '-';
}

}  // namespace

std::optional<std::string> mig_profile_from_name(const std::string& name) {
  constexpr std::string_view kMarker = "MIG ";
  const std::size_t at = name.rfind(kMarker);
  if (at == std::string::npos) return std::nullopt;
  std::string_view rest = std::string_view(name).substr(at + kMarker.size());
  rest = rest.substr(0, rest.find(' '));
  if (!is_profile(rest)) return std::nullopt;
  return std::string(rest);
}

std::string device_index_label(unsigned device_index) {
  if (is_dcgm_instance_device_index(device_index)) {
    return fmt::format("DCGM GPU instance {}", device_index - kDcgmInstanceIndexBase);
  }
  if (!is_mig_device_index(device_index)) return fmt::format("GPU {}", device_index);
  const unsigned offset = device_index - kMigIndexBase;
  return fmt::format("GPU {} GI {}", offset / 100, offset % 100);
}

std::string mig_label(const MigIdentity& mig) {
  std::string label = fmt::format("GPU {} GI {}", mig.parent_index, mig.gpu_instance_id);
  if (mig.profile) label += fmt::format(" ({})", *mig.profile);
  return label;
}

}  // namespace gpuscope
