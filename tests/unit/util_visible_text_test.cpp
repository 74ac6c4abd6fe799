// util/visible_text: what comes from outside is shown, never acted on by the terminal.
#include <gtest/gtest.h>

#include "util/visible_text.hpp"

namespace gpuscope::util {
namespace {

TEST(VisibleText, ControlBytesAreShown) {
  EXPECT_EQ(visible("a\x1b[31mred\x07\nb\r\tc\x7f"), "a\\x1b[31mred\\x07\\nb\\r\\tc\\x7f");
  EXPECT_EQ(visible(std::string_view("nul\0x", 5)), "nul\\x00x");
  // A forged line of gpuscope's own stays on the line it came in.
  EXPECT_EQ(visible("oops\ngpuscope: note: all fine"), "oops\\ngpuscope: note: all fine");
}

TEST(VisibleText, Utf8IsKeptButItsControlsAndInvalidBytesAreNot) {
  EXPECT_EQ(visible("H100 · 300 W … ünïcode \\ kept"), "H100 · 300 W … ünïcode \\ kept");
  EXPECT_EQ(visible("\xc2\x9b"
                    "31m"),
            "\\u{009B}31m");  // C1 CSI
  EXPECT_EQ(visible("abc\xe2\x80\xae"
                    "evil"),
            "abc\\u{202E}evil");                 // right-to-left override
  EXPECT_EQ(visible("\xff\xc3"), "\\xff\\xc3");  // not UTF-8, cut off
  EXPECT_EQ(visible("\xc0\xaf"), "\\xc0\\xaf");  // overlong '/'
}

}  // namespace
}  // namespace gpuscope::util
