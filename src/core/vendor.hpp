// Which vendor's library answers for a GPU, spelled once: an enum for code to compare and the word
// stored in a run database (devices.vendor), printed in JSON ("vendor") and exported as the
// `vendor` label, beside each value.
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <utility>

namespace gpuscope {

enum class Vendor {
  Nvidia,  // NVML (and DCGM)
  Amd,     // AMD SMI, else ROCm SMI (docs/amd.md)
};

// Every vendor with its stored word, in the order gpuscope lists their GPUs.
inline constexpr std::array<std::pair<Vendor, std::string_view>, 2> kVendorWords = {{
    {Vendor::Nvidia, "nvidia"},
    {Vendor::Amd, "amd"},
}};

// "nvidia" / "amd": the stored word.
constexpr std::string_view vendor_word(Vendor vendor) {
  for (const auto& [value, word] : kVendorWords) {
    if (value == vendor) return word;
  }
  return "nvidia";
}

// The vendor a stored word stands for; nullopt for a word this gpuscope does not know, which the
// caller turns into its own message.
constexpr std::optional<Vendor> parse_vendor(std::string_view word) {
  for (const auto& [value, text] : kVendorWords) {
    if (text == word) return value;
  }
  return std::nullopt;
}

}  // namespace gpuscope
