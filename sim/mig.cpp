#include "sim/mig.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "sim/gpu_model.hpp"

namespace gpuscope::sim {
namespace {

// From real nvidia-smi mig -lgip listings (memory: the GiB column x 1024, as NVML's memorySizeMB);
// GPU instance ids as the driver hands them out (7g: 0, 4g: 1, 3g: 1-2, 2g: 3-5, 1g: 7-13).
// name, id, compute slices, memory slices, max, SMs, MiB, CE, DEC, JPEG, OFA, GI ids.
constexpr std::array<MigProfile, 7> kA100Sxm80 = {{
    {"1g.10gb", 19, 1, 1, 7, 14, 9728, 1, 0, 0, 0, 7, 13},
    {"1g.10gb+me", 20, 1, 1, 1, 14, 9728, 1, 1, 1, 1, 7, 13},
    {"1g.20gb", 15, 1, 2, 4, 14, 19968, 1, 1, 0, 0, 7, 13},
    {"2g.20gb", 14, 2, 2, 3, 28, 19968, 2, 1, 0, 0, 3, 5},
    {"3g.40gb", 9, 3, 4, 2, 42, 40192, 3, 2, 0, 0, 1, 2},
    {"4g.40gb", 5, 4, 4, 1, 56, 40192, 4, 2, 0, 0, 1, 1},
    {"7g.80gb", 0, 7, 8, 1, 98, 80896, 7, 5, 1, 1, 0, 0},
}};

constexpr std::array<MigProfile, 7> kH100Sxm80 = {{
    {"1g.10gb", 19, 1, 1, 7, 16, 9984, 1, 1, 1, 0, 7, 13},
    {"1g.10gb+me", 20, 1, 1, 1, 16, 9984, 1, 1, 1, 1, 7, 13},
    {"1g.20gb", 15, 1, 2, 4, 26, 20096, 1, 1, 1, 0, 7, 13},
    {"2g.20gb", 14, 2, 2, 3, 32, 20096, 2, 1, 1, 0, 3, 5},
    {"3g.40gb", 9, 3, 4, 2, 60, 40448, 3, 3, 3, 0, 1, 2},
    {"4g.40gb", 5, 4, 4, 1, 64, 40448, 4, 4, 4, 0, 1, 1},
    {"7g.80gb", 0, 7, 8, 1, 132, 81152, 7, 7, 7, 1, 0, 0},
}};

constexpr std::int64_t to_ns(double seconds) {
  return static_cast<std::int64_t>(seconds * 1e9 + 0.5);
}

}  // namespace

std::span<const MigProfile> mig_profiles(std::string_view model) {
  if (model == "A100-SXM4-80GB") return kA100Sxm80;
  if (model == "H100-SXM5-80GB") return kH100Sxm80;
  return {};
}

const MigProfile* find_mig_profile(std::string_view model, std::string_view name) {
  for (const MigProfile& profile : mig_profiles(model)) {
    if (profile.name == name) return &profile;
  }
  return nullptr;
}

MigInstance::MigInstance(const MigInstanceSpec& spec, const MigProfile& profile)
    : spec_(spec), profile_(&profile), timeline_(spec_.phases) {
  created_ns_ = to_ns(spec_.created_at_s);
  time_ns_ = created_ns_;
  enter_bucket(0);
}

bool MigInstance::live_at(std::int64_t t_ns) const {
  if (t_ns < created_ns_) return false;
  return !spec_.destroyed_at_s || t_ns < to_ns(*spec_.destroyed_at_s);
}

void MigInstance::enter_bucket(std::int64_t index) {
  // The levels at the bucket's start hold for the whole bucket, as in GpuModel.
  const double work = static_cast<double>(index) * kBucketSeconds;
  const std::size_t p = timeline_.phase_at(work);
  const double ramp = timeline_.ramp_fraction(p, work);
  const Phase& phase = spec_.phases[p];
  const Phase& previous = spec_.phases[p == 0 ? 0 : p - 1];
  for (std::size_t m = 0; m < kActivityCount; ++m) {
    levels_[m] = previous.levels[m] + (phase.levels[m] - previous.levels[m]) * ramp;
  }
  memory_mib_ =
      (previous.memory_used_gib + (phase.memory_used_gib - previous.memory_used_gib) * ramp) *
      1024.0;
  bucket_ = index;
}

void MigInstance::advance_to(std::int64_t t_ns) {
  if (t_ns <= time_ns_) return;
  const std::int64_t target = (t_ns - created_ns_) / kBucketNs;
  while (bucket_ < target) {
    for (std::size_t m = 0; m < kActivityCount; ++m) integral_at_bucket_[m] += levels_[m] * 0.1;
    enter_bucket(bucket_ + 1);
  }
  time_ns_ = t_ns;
}

Levels MigInstance::activity_integral() const {
  const std::int64_t into = time_ns_ - created_ns_ - bucket_ * kBucketNs;
  const double seconds = static_cast<double>(into) / 1e9;
  Levels out = integral_at_bucket_;
  for (std::size_t m = 0; m < kActivityCount; ++m) out[m] += levels_[m] * seconds;
  return out;
}

}  // namespace gpuscope::sim
