// util/text_table.hpp: widths in code points, alignment per column, the optional rule.
#include <gtest/gtest.h>

#include "util/text_table.hpp"

namespace gpuscope::util {
namespace {

TEST(TextTable, FitsColumnsToTheWidestCellCountingCodePoints) {
  const auto text = render_table({"metric", "unit", "mean"},
                                 {{"temperature_c", "°C", "32.3"}, {"power_w", "W", "411.1"}},
                                 {{Align::Left}, false});
  EXPECT_EQ(text.header, "metric         unit   mean\n");
  EXPECT_EQ(text.body,
            "temperature_c    °C   32.3\n"
            "power_w           W  411.1\n");
}

TEST(TextTable, RuleUnderTheHeaderAndAnUnpaddedLeftLastColumn) {
  const auto text = render_table({"count", "name"}, {{"12", "gemm"}, {"3", "copy_kernel"}},
                                 {{Align::Right, Align::Left}, true});
  EXPECT_EQ(text.header + text.body,
            "count  name\n"
            "-----  -----------\n"
            "   12  gemm\n"
            "    3  copy_kernel\n");
  EXPECT_EQ(display_width("µs°"), 3u);
}

}  // namespace
}  // namespace gpuscope::util
