#include "trace/device_map.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

namespace gpuscope::trace {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool parse_hex(std::string_view text, std::uint32_t& out) {
  if (text.empty() || text.size() > 8) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out, 16);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string format_gpu_uuid(const std::array<std::uint8_t, 16>& b) {
  std::string out = "GPU-";
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", b[i]);
  }
  return out;
}

std::optional<PciAddress> parse_pci_bus_id(std::string_view text) {
  // DOMAIN:BUS:DEVICE.FUNCTION
  const auto first = text.find(':');
  if (first == std::string_view::npos) return std::nullopt;
  const auto second = text.find(':', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  const auto dot = text.find('.', second + 1);
  PciAddress a;
  if (!parse_hex(text.substr(0, first), a.domain) ||
      !parse_hex(text.substr(first + 1, second - first - 1), a.bus) ||
      !parse_hex(text.substr(second + 1, dot == std::string_view::npos ? std::string_view::npos
                                                                       : dot - second - 1),
                 a.device)) {
    return std::nullopt;
  }
  return a;
}

std::string format_pci_bus_id(const PciAddress& a) {
  return fmt::format("{:08X}:{:02X}:{:02X}.0", a.domain, a.bus, a.device);
}

std::optional<unsigned> match_device(const SidecarDevice& device,
                                     const std::vector<DeviceDescription>& devices) {
  if (device.uuid) {
    const std::string uuid = lower(format_gpu_uuid(*device.uuid));
    for (const auto& d : devices) {
      if (d.uuid && lower(*d.uuid) == uuid) return d.index;
    }
  }
  if (device.pci) {
    for (const auto& d : devices) {
      if (!d.pci_bus_id) continue;
      if (const auto address = parse_pci_bus_id(*d.pci_bus_id);
          address && *address == *device.pci) {
        return d.index;
      }
    }
  }
  return std::nullopt;
}

}  // namespace gpuscope::trace
