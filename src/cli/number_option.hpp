// The one way gpuscope reads a number from its command line: strictly (the whole text is a
// finite number, no junk, no NaN or infinity) and within a range documented per option in
// docs/cli.md, with one message shape for every option:
//   gpuscope: error: --pue nan is not a number between 1 and 5; ...  (exit code 2)
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::cli {

// What an option accepts: [min, max], or (min, max] with exclusive_min; whole numbers only
// when integer. Durations' maxima keep every conversion to nanoseconds far from overflow.
// Written NumberRange(1, 1000).whole(), NumberRange(0, 1e18).above_min(), ...with_hint("...").
struct NumberRange {
  constexpr NumberRange(double min_value, double max_value, std::string_view unit_text = {})
      : min(min_value), max(max_value), unit(unit_text) {}
  constexpr NumberRange whole() const {
    NumberRange r = *this;
    r.integer = true;
    return r;
  }
  constexpr NumberRange above_min() const {
    NumberRange r = *this;
    r.exclusive_min = true;
    return r;
  }
  constexpr NumberRange with_hint(std::string_view text) const {
    NumberRange r = *this;
    r.hint = text;
    return r;
  }

  double min;
  double max;
  std::string_view unit;  // shown after the range in messages and help: "ms", "s", "gCO2e/kWh"
  bool integer = false;
  bool exclusive_min = false;
  std::string_view hint;  // what to do instead, when the range alone does not say it
};  // unit and hint are string literals: registrations keep the range until parsing

// Ranges shared by several commands, so that they cannot drift apart.
inline constexpr NumberRange kSamplingMs{10, 3'600'000, "ms"};
inline constexpr NumberRange kWorkUnits = NumberRange(0, 1e18).above_min();
// The dirtiest grids are near 1000 gCO2e/kWh; 5000 leaves room for any fuel.
inline constexpr NumberRange kCarbonIntensity{0, 5000, "gCO2e/kWh"};

// The value of `option` given as `text` under `range`; throws CLI::ValidationError (the
// command line's exit code 2) with the message shape above.
double checked_number(std::string_view option, std::string_view text, const NumberRange& range);

// "between 10 and 3600000 ms", "greater than 0 and at most 1e+18" (for messages and help).
std::string range_text(const NumberRange& range);

// Registers `name` on `app`, storing the checked number into `target` when given. Help text
// gets the range appended. The targets gpuscope uses: double, optional<double>, optional<unsigned>
// (whole numbers), int, size_t.
CLI::Option* add_number_option(CLI::App& app, const std::string& name, double& target,
                               const NumberRange& range, const std::string& description);
CLI::Option* add_number_option(CLI::App& app, const std::string& name,
                               std::optional<double>& target, const NumberRange& range,
                               const std::string& description);
CLI::Option* add_number_option(CLI::App& app, const std::string& name,
                               std::optional<unsigned>& target, const NumberRange& range,
                               const std::string& description);
CLI::Option* add_number_option(CLI::App& app, const std::string& name, int& target,
                               const NumberRange& range, const std::string& description);
CLI::Option* add_number_option(CLI::App& app, const std::string& name, std::size_t& target,
                               const NumberRange& range, const std::string& description);

}  // namespace gpuscope::cli
