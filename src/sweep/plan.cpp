#include "sweep/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace gpuscope::sweep {
namespace {

constexpr std::size_t kMaxSettings = 200;

double parse_number(std::string_view text, std::string_view whole, std::string_view option) {
  double value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(begin, end, value);
  if (text.empty() || error != std::errc() || ptr != end || !std::isfinite(value)) {
    throw Error::usage(fmt::format("{} '{}': '{}' is not a number", option, whole, text), {},
                       "give start:stop:step (e.g. 200:700:50) or a list (e.g. 300,400,500)");
  }
  return value;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const auto at = text.find(separator, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return parts;
}

}  // namespace

std::vector<double> parse_settings(std::string_view text, std::string_view option) {
  std::vector<double> values;
  if (text.find(':') != std::string_view::npos) {
    const auto parts = split(text, ':');
    if (parts.size() != 3) {
      throw Error::usage(fmt::format("{} '{}' is not start:stop:step", option, text), {},
                         "e.g. 200:700:50 for 200, 250, ..., 700");
    }
    const double start = parse_number(parts[0], text, option);
    const double stop = parse_number(parts[1], text, option);
    const double step = parse_number(parts[2], text, option);
    if (step <= 0) {
      throw Error::usage(fmt::format("{} '{}': the step must be positive", option, text));
    }
    if (start > stop) {
      throw Error::usage(fmt::format("{} '{}': start is above stop", option, text), {},
                         "write the range from low to high, e.g. 200:700:50");
    }
    const double count = std::floor((stop - start) / step + 1e-9) + 1;
    if (count > static_cast<double>(kMaxSettings)) {
      throw Error::usage(fmt::format("{} '{}' gives {} settings", option, text, count),
                         fmt::format("at most {}", kMaxSettings), "use a larger step");
    }
    for (int i = 0; i < static_cast<int>(count); ++i) values.push_back(start + i * step);
  } else {
    for (auto part : split(text, ',')) values.push_back(parse_number(part, text, option));
    if (values.size() > kMaxSettings) {
      throw Error::usage(fmt::format("{} gives {} settings", option, values.size()),
                         fmt::format("at most {}", kMaxSettings));
    }
  }
  for (double v : values) {
    if (v <= 0) throw Error::usage(fmt::format("{} '{}': {} is not positive", option, text, v));
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

void check_range(const std::vector<double>& values, double min, double max, std::string_view unit,
                 std::string_view what) {
  for (double v : values) {
    if (v < min || v > max) {
      throw Error::usage(
          fmt::format("{:g} {} is outside the {} range of the selected GPUs, {:g}–{:g} {}", v, unit,
                      what, min, max, unit),
          {}, fmt::format("choose settings between {:g} and {:g} {}", min, max, unit));
    }
  }
}

std::vector<Setting> make_plan(const std::vector<double>& values, double baseline) {
  std::vector<Setting> plan;
  bool has_baseline = false;
  for (double v : values) {
    const bool is_baseline = std::abs(v - baseline) < 1e-9;
    has_baseline |= is_baseline;
    plan.push_back({v, is_baseline});
  }
  if (!has_baseline) plan.push_back({baseline, true});
  std::sort(plan.begin(), plan.end(),
            [](const Setting& a, const Setting& b) { return a.value > b.value; });
  return plan;
}

std::vector<Trial> plan_trials(const std::vector<Setting>& plan, int repeats) {
  std::vector<Trial> trials;
  for (int r = 1; r <= repeats; ++r) {
    for (const Setting& s : plan) {
      Trial t;
      t.number = static_cast<int>(trials.size()) + 1;
      t.setting = s.value;
      t.baseline = s.baseline;
      t.repeat = r;
      trials.push_back(t);
    }
  }
  return trials;
}

}  // namespace gpuscope::sweep
