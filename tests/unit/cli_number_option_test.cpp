// The one numeric option parser of the command line: strict text, finite values, documented
// ranges, one message shape (`profile -s nan` made the sampler run flat out).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "cli/number_option.hpp"
#include "util/number_text.hpp"

namespace gpuscope::cli {
namespace {

struct TextCase {
  const char* text;
  std::optional<double> value;
};

TEST(NumberOption, ParsesOnlyWholeFiniteNumbers) {
  const std::vector<TextCase> cases = {
      {"1", 1},     {"0", 0},     {"-2.5", -2.5}, {"1e3", 1000}, {"0.001", 0.001}, {"nan", {}},
      {"NaN", {}},  {"-nan", {}}, {"inf", {}},    {"-inf", {}},  {"infinity", {}}, {"1e999", {}},
      {"", {}},     {" 1", {}},   {"1 ", {}},     {"1x", {}},    {"10ms", {}},     {"+1", {}},
      {"0x10", {}}, {"1,5", {}},  {"--", {}},     {"1e", {}},    {".", {}},        {"١", {}},
  };
  for (const TextCase& c : cases) {
    EXPECT_EQ(util::parse_finite_number(c.text), c.value) << "'" << c.text << "'";
  }
}

struct RangeCase {
  NumberRange range;
  const char* text;
  bool accepted;
};

TEST(NumberOption, ChecksTheRange) {
  constexpr NumberRange kPue{1, 5};
  constexpr NumberRange kRepeat = NumberRange(1, 1000).whole();
  constexpr NumberRange kPositive = NumberRange(0, 1e18).above_min();
  const std::vector<RangeCase> cases = {
      {kPue, "1", true},
      {kPue, "5", true},
      {kPue, "1.2", true},
      {kPue, "0.99", false},
      {kPue, "5.01", false},
      {kPue, "nan", false},
      {kRepeat, "3", true},
      {kRepeat, "3.5", false},
      {kRepeat, "1e3", true},
      {kRepeat, "1001", false},
      {kRepeat, "0", false},
      {kPositive, "0", false},
      {kPositive, "1e-9", true},
      {kPositive, "1e18", true},
      {kPositive, "2e18", false},
      {kSamplingMs, "10", true},
      {kSamplingMs, "9.99", false},
      {kSamplingMs, "1e18", false},
      {kSamplingMs, "3600000", true},
  };
  for (const RangeCase& c : cases) {
    if (c.accepted) {
      EXPECT_NO_THROW(checked_number("--x", c.text, c.range)) << c.text;
    } else {
      EXPECT_THROW(checked_number("--x", c.text, c.range), CLI::ValidationError) << c.text;
    }
  }
}

std::string message_of(const std::string& option, const std::string& text,
                       const NumberRange& range) {
  try {
    checked_number(option, text, range);
  } catch (const CLI::ValidationError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(NumberOption, SaysWhatIsWrongInOneShape) {
  EXPECT_EQ(message_of("--pue", "nan", {1, 5}), "--pue nan is not a number between 1 and 5");
  EXPECT_EQ(message_of("--pue", "", {1, 5}), "--pue '' is not a number between 1 and 5");
  EXPECT_EQ(message_of("--sampling-ms", "inf", kSamplingMs),
            "--sampling-ms inf is not a number between 10 and 3600000 ms");
  EXPECT_EQ(message_of("--repeat", "2.5", NumberRange(1, 1000).whole()),
            "--repeat 2.5 is not a whole number between 1 and 1000");
  EXPECT_EQ(message_of("--work-units", "0", kWorkUnits),
            "--work-units 0 is not a number greater than 0 and at most 1e+18");
  EXPECT_EQ(
      message_of("--max-runtime", "-1", NumberRange(0, 10, "s").with_hint("0 means no limit")),
      "--max-runtime -1 is not a number between 0 and 10 s; 0 means no limit");
}

// Registered on a CLI11 app: the value lands in the target; a bad one is a ParseError (exit 2
// in gpuscope's main) whose text is the message above, whichever alias was typed.
TEST(NumberOption, RegistersEveryTargetType) {
  CLI::App app;
  double interval = 100;
  std::optional<double> units;
  int repeat = 1;
  std::size_t top = 0;
  add_number_option(app, "-s,--sampling-ms", interval, kSamplingMs, "interval");
  add_number_option(app, "--work-units", units, kWorkUnits, "units");
  add_number_option(app, "--repeat", repeat, NumberRange(1, 1000).whole(), "repeat");
  add_number_option(app, "--top", top, NumberRange(1, 1e9).whole(), "top");
  app.parse("--top 7 --repeat 3 --work-units 1e3 -s 250", /*program_name_included=*/false);
  EXPECT_EQ(interval, 250);
  EXPECT_EQ(units, 1000);
  EXPECT_EQ(repeat, 3);
  EXPECT_EQ(top, 7U);

  CLI::App bad;
  double value = 100;
  add_number_option(bad, "-s,--sampling-ms", value, kSamplingMs, "interval");
  try {
    bad.parse("-s nan", /*program_name_included=*/false);
    ADD_FAILURE() << "-s nan was accepted";
  } catch (const CLI::ParseError& e) {
    EXPECT_EQ(std::string(e.what()), "--sampling-ms nan is not a number between 10 and 3600000 ms");
  }
  EXPECT_EQ(value, 100);
}

}  // namespace
}  // namespace gpuscope::cli
