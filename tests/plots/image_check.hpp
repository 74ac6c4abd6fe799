// Reading back what the plots wrote: PNG header and pixels (libpng), SVG root attributes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "support/temp_dir.hpp"  // read_file

namespace gpuscope::testing {

struct PngInfo {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::size_t distinct_colours = 0;    // capped at 4096
  double non_background_fraction = 0;  // pixels differing from the top-left one
};

// The IHDR size read straight from the file (nullopt when it is not a PNG).
std::optional<PngInfo> png_header(const std::string& path);
// The size and pixel statistics from decoding the whole image with libpng.
std::optional<PngInfo> png_decode(const std::string& path);

struct SvgRoot {
  std::string width, height, view_box;
};
// The attributes of the <svg> root element, nullopt when there is none.
std::optional<SvgRoot> svg_root(const std::string& text);

}  // namespace gpuscope::testing
