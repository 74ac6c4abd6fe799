// One PLplot output stream writing one file. PLplot keeps global state (the current stream, the
// error handlers), so a PlotStream holds a process-wide lock while it lives, makes its own stream
// current, and ends it in the destructor whatever happened: no stream is ever left open.
#pragma once

#include <array>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>

namespace gpuscope::report::plots {

class PlotStream {
 public:
  // Starts `device` ("pngcairo", "svgcairo", "pdfcairo") drawing `width` × `height` pixels
  // (points for PDF) into `file`, named `shown_as` in errors (the file it will be renamed to).
  // Throws Error when PLplot lacks the driver or the file cannot be created.
  PlotStream(const std::string& device, const std::filesystem::path& file, int width, int height,
             const std::filesystem::path& shown_as);
  ~PlotStream();
  PlotStream(const PlotStream&) = delete;
  PlotStream& operator=(const PlotStream&) = delete;

  // Throws Error naming `what` if PLplot reported an error since the stream started.
  void check(std::string_view what) const;
  // Ends the stream (flushing the file); throws Error if PLplot reported an error.
  void finish();

  int width() const { return width_; }
  int height() const { return height_; }
  // PLplot sizes characters in millimetres: the size that is `pixels` high on this page.
  double mm(double pixels) const;

 private:
  std::string error() const;

  std::unique_lock<std::mutex> lock_;
  int stream_ = -1;
  int error_code_ = 0;  // PLplot's per-stream error state (plsError)
  std::array<char, 2048> error_message_{};
  int width_ = 0;
  int height_ = 0;
  double dots_per_mm_ = 72.0 / 25.4;
  std::filesystem::path shown_as_;
};

// Whether this PLplot has the file driver `device` (e.g. "pngcairo").
bool has_device(const std::string& device);

}  // namespace gpuscope::report::plots
