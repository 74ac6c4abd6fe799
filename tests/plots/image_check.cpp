#include "plots/image_check.hpp"

#include <png.h>

#include <array>
#include <fstream>
#include <iterator>
#include <set>
#include <vector>

namespace gpuscope::testing {

std::optional<PngInfo> png_header(const std::string& path) {
  const std::string bytes = read_file(path);
  // Signature (8), then the IHDR chunk: length (4), "IHDR" (4), width (4), height (4), big-endian.
  static constexpr std::array<unsigned char, 8> kSignature = {0x89, 'P',  'N',  'G',
                                                              '\r', '\n', 0x1a, '\n'};
  if (bytes.size() < 24) return std::nullopt;
  for (std::size_t i = 0; i < kSignature.size(); ++i) {
    if (static_cast<unsigned char>(bytes[i]) != kSignature[i]) return std::nullopt;
  }
  if (bytes.compare(12, 4, "IHDR") != 0) return std::nullopt;
  auto be32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  PngInfo info;
  info.width = be32(16);
  info.height = be32(20);
  return info;
}

std::optional<PngInfo> png_decode(const std::string& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_file(&image, path.c_str()) == 0) return std::nullopt;
  image.format = PNG_FORMAT_RGB;
  std::vector<unsigned char> pixels(PNG_IMAGE_SIZE(image));
  if (png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr) == 0) {
    png_image_free(&image);
    return std::nullopt;
  }
  PngInfo info;
  info.width = image.width;
  info.height = image.height;
  std::set<std::uint32_t> colours;
  std::size_t differing = 0;
  const std::size_t count = pixels.size() / 3;
  auto rgb = [&](std::size_t i) {
    return (std::uint32_t{pixels[3 * i]} << 16) | (std::uint32_t{pixels[3 * i + 1]} << 8) |
           std::uint32_t{pixels[3 * i + 2]};
  };
  const std::uint32_t background = count > 0 ? rgb(0) : 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint32_t c = rgb(i);
    if (c != background) ++differing;
    if (colours.size() < 4096) colours.insert(c);
  }
  info.distinct_colours = colours.size();
  info.non_background_fraction =
      count > 0 ? static_cast<double>(differing) / static_cast<double>(count) : 0;
  return info;
}

std::optional<SvgRoot> svg_root(const std::string& text) {
  const auto start = text.find("<svg");
  if (start == std::string::npos) return std::nullopt;
  const auto end = text.find('>', start);
  if (end == std::string::npos) return std::nullopt;
  const std::string tag = text.substr(start, end - start);
  auto attribute = [&](const std::string& name) -> std::string {
    const std::string key = " " + name + "=\"";
    const auto at = tag.find(key);
    if (at == std::string::npos) return {};
    const auto value = at + key.size();
    return tag.substr(value, tag.find('"', value) - value);
  };
  return SvgRoot{attribute("width"), attribute("height"), attribute("viewBox")};
}

}  // namespace gpuscope::testing
