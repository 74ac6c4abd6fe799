#include "cli/number_option.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <memory>
#include <system_error>

#include "util/number_text.hpp"

namespace gpuscope::cli {
namespace {

bool in_range(double value, const NumberRange& range) {
  const bool above_min = range.exclusive_min ? value > range.min : value >= range.min;
  return above_min && value <= range.max && (!range.integer || std::floor(value) == value);
}

// Registers a string option whose callback checks the text and hands the number to store.
template <typename Store>
CLI::Option* add_checked(CLI::App& app, const std::string& name, const NumberRange& range,
                         const std::string& description, Store store) {
  // The option's long name, as the user finds it in --help and docs/cli.md; the callback runs
  // after registration, when the option (and so its name) exists.
  auto shown = std::make_shared<std::string>();
  CLI::Option* option = app.add_option_function<std::string>(
      name,
      [shown, range, store](const std::string& text) {
        store(checked_number(*shown, text, range));
      },
      fmt::format("{} ({})", description, range_text(range)));
  *shown = option->get_name(/*positional=*/false, /*all_options=*/false);
  return option;
}

}  // namespace

std::string range_text(const NumberRange& range) {
  const std::string unit = range.unit.empty() ? "" : fmt::format(" {}", range.unit);
  if (range.exclusive_min) {
    return fmt::format("greater than {} and at most {}{}", range.min, range.max, unit);
  }
  return fmt::format("between {} and {}{}", range.min, range.max, unit);
}

double checked_number(std::string_view option, std::string_view text, const NumberRange& range) {
  const std::optional<double> value = util::parse_finite_number(text);
  if (value && in_range(*value, range)) return *value;
  std::string message = fmt::format("{} {} is not a {} {}", option, text.empty() ? "''" : text,
                                    range.integer ? "whole number" : "number", range_text(range));
  if (!range.hint.empty()) message += fmt::format("; {}", range.hint);
  throw CLI::ValidationError(message);
}

CLI::Option* add_number_option(CLI::App& app, const std::string& name, double& target,
                               const NumberRange& range, const std::string& description) {
  return add_checked(app, name, range, description, [&target](double v) { target = v; });
}

CLI::Option* add_number_option(CLI::App& app, const std::string& name,
                               std::optional<double>& target, const NumberRange& range,
                               const std::string& description) {
  return add_checked(app, name, range, description, [&target](double v) { target = v; });
}

CLI::Option* add_number_option(CLI::App& app, const std::string& name,
                               std::optional<unsigned>& target, const NumberRange& range,
                               const std::string& description) {
  return add_checked(app, name, range.whole(), description,
                     [&target](double v) { target = static_cast<unsigned>(v); });
}

CLI::Option* add_number_option(CLI::App& app, const std::string& name, int& target,
                               const NumberRange& range, const std::string& description) {
  return add_checked(app, name, range, description,
                     [&target](double v) { target = static_cast<int>(v); });
}

CLI::Option* add_number_option(CLI::App& app, const std::string& name, std::size_t& target,
                               const NumberRange& range, const std::string& description) {
  return add_checked(app, name, range, description,
                     [&target](double v) { target = static_cast<std::size_t>(v); });
}

}  // namespace gpuscope::cli
