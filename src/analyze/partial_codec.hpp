// The analyzer's partial results as bytes, exactly (doubles as their bits), for the distributed
// analysis (app/analysis_partial, docs/analysis.md "A job of thousands of GPUs"): what pass 1
// gathered, what pass 2 made of each GPU, and the sketches and counts of a task's GPUs. Written
// and read by the same build (the files carry the format's version); a damaged or cut-off part is
// an Error that says so, never a silent difference.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "analyze/analyzer.hpp"

namespace gpuscope::analyze {

class PartWriter {
 public:
  void u8(std::uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) { raw(&v, sizeof v); }
  void u64(std::uint64_t v) { raw(&v, sizeof v); }
  void i64(std::int64_t v) { raw(&v, sizeof v); }
  void f64(double v) { raw(&v, sizeof v); }
  void f32(float v) { raw(&v, sizeof v); }
  void text(std::string_view v);
  const std::string& bytes() const { return bytes_; }
  std::string take() { return std::move(bytes_); }

 private:
  void raw(const void* p, std::size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  std::string bytes_;
};

class PartReader {
 public:
  // `what` names the bytes in errors ("partial summary parts/part-3-of-8.bin").
  PartReader(std::string_view bytes, std::string what) : bytes_(bytes), what_(std::move(what)) {}
  std::uint8_t u8() { return number<std::uint8_t>(); }
  std::uint32_t u32() { return number<std::uint32_t>(); }
  std::uint64_t u64() { return number<std::uint64_t>(); }
  std::int64_t i64() { return number<std::int64_t>(); }
  double f64() { return number<double>(); }
  float f32() { return number<float>(); }
  std::string text();
  // A count of elements of at least `element_size` bytes each that must still fit in the bytes
  // left (a damaged count cannot make the reader allocate gigabytes).
  std::size_t count(std::size_t element_size);
  bool done() const { return at_ == bytes_.size(); }
  [[noreturn]] void damaged(std::string_view detail) const;

 private:
  void raw(void* p, std::size_t n);
  template <typename T>
  T number() {
    T v{};
    raw(&v, sizeof v);
    return v;
  }
  std::string_view bytes_;
  std::size_t at_ = 0;
  std::string what_;
};

// Everything of a prepared GPU but its key (the reader knows which GPU it is) and its sketches
// and distinct-value counts (OverallCounts::take moved them out first).
void write_device(PartWriter& out, const PreparedDevice& device);
PreparedDevice read_device(PartReader& in);

void write_activity(PartWriter& out, const ActivityPart& part);
ActivityPart read_activity(PartReader& in);

void write_counts(PartWriter& out, const OverallCounts& counts);
OverallCounts read_counts(PartReader& in);

}  // namespace gpuscope::analyze
