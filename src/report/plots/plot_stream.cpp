#include "report/plots/plot_stream.hpp"

#include <fmt/format.h>
#include <plplot.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/error.hpp"

namespace gpuscope::report::plots {
namespace {

std::mutex& plplot_mutex() {
  static std::mutex mutex;
  return mutex;
}

bool has_device_locked(const std::string& device) {
  constexpr int kMaxDevices = 128;
  std::vector<PLCHAR_VECTOR> menus(kMaxDevices), names(kMaxDevices);
  PLCHAR_VECTOR* menu_data = menus.data();
  PLCHAR_VECTOR* name_data = names.data();
  int count = kMaxDevices;
  plgFileDevs(&menu_data, &name_data, &count);
  for (int i = 0; i < count && i < kMaxDevices; ++i) {
    if (name_data[i] != nullptr && device == name_data[i]) return true;
  }
  return false;
}

}  // namespace

bool has_device(const std::string& device) {
  std::lock_guard lock(plplot_mutex());
  return has_device_locked(device);
}

PlotStream::PlotStream(const std::string& device, const std::filesystem::path& file, int width,
                       int height, const std::filesystem::path& shown_as)
    : lock_(plplot_mutex()), width_(width), height_(height), shown_as_(shown_as) {
  if (width < 200 || height < 150 || width > 20000 || height > 20000) {
    throw Error::usage(fmt::format("cannot draw a {} × {} plot", width, height),
                       "the size is out of range", "use 200 to 20000 pixels a side");
  }
  // A driver missing or a file that cannot be opened would make PLplot exit the process, so both
  // are checked here first.
  if (!has_device_locked(device)) {
    throw Error(fmt::format("cannot draw {} plots", device),
                fmt::format("this PLplot has no {} driver", device),
                "install plplot-driver-cairo (scripts/setup.sh does)");
  }
  if (std::FILE* probe = std::fopen(file.c_str(), "wb")) {
    std::fclose(probe);
  } else {
    const int error = errno;
    throw Error(fmt::format("cannot write plot {}", shown_as.string()), std::strerror(error),
                "check that the folder exists and is writable");
  }
  PLINT stream = 0;
  plmkstrm(&stream);
  stream_ = stream;
  // Recoverable errors land in this stream's code and message instead of stderr.
  plsError(&error_code_, error_message_.data());
  plsdev(device.c_str());
  plsfnam(file.c_str());
  plspage(0, 0, width, height, 0, 0);
  plscolbg(255, 255, 255);
  plinit();
  PLFLT xp = 0, yp = 0;
  PLINT xleng = 0, yleng = 0, xoff = 0, yoff = 0;
  plgpage(&xp, &yp, &xleng, &yleng, &xoff, &yoff);
  if (xp > 0) dots_per_mm_ = xp / 25.4;
  if (error_code_ != 0) {
    const std::string message = error();
    plend1();
    stream_ = -1;
    throw Error(fmt::format("cannot start plot {}", shown_as.string()), message);
  }
}

PlotStream::~PlotStream() {
  if (stream_ >= 0) {
    plsstrm(stream_);
    plend1();
  }
}

std::string PlotStream::error() const {
  // PLplot writes "\n*** PLPLOT ERROR, ABORTING OPERATION ***\n<what>, aborting operation\n".
  std::string text(error_message_.data());
  const auto header = text.find("***\n");
  if (header != std::string::npos) text.erase(0, header + 4);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.empty() ? "PLplot reported an error" : text;
}

void PlotStream::check(std::string_view what) const {
  if (error_code_ == 0) return;
  throw Error(fmt::format("cannot draw {} into {}", what, shown_as_.string()), error());
}

void PlotStream::finish() {
  if (stream_ >= 0) {
    plsstrm(stream_);
    plend1();
    stream_ = -1;
  }
  check("the plot");
}

double PlotStream::mm(double pixels) const {
  return pixels / dots_per_mm_;
}

}  // namespace gpuscope::report::plots
