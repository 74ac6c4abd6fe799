#include "launch/line_splitter.hpp"

#include <gtest/gtest.h>

namespace gpuscope::launch {
namespace {

using Lines = std::vector<std::string>;

TEST(LineSplitter, JoinsLinesSpanningChunks) {
  LineSplitter splitter;
  EXPECT_EQ(splitter.feed("ab"), Lines{});
  EXPECT_EQ(splitter.feed("c\nde\n"), (Lines{"abc", "de"}));
  EXPECT_EQ(splitter.feed("f"), Lines{});
  EXPECT_EQ(splitter.finish(), Lines{"f"});
  EXPECT_EQ(splitter.finish(), Lines{});
}

TEST(LineSplitter, KeepsEmptyLinesAndCarriageReturns) {
  LineSplitter splitter;
  EXPECT_EQ(splitter.feed("\n\r\nx\r"), (Lines{"", "\r"}));
  EXPECT_EQ(splitter.finish(), Lines{"x\r"});
}

TEST(LineSplitter, CutsLinesLongerThanTheCap) {
  LineSplitter splitter(4);
  EXPECT_EQ(splitter.feed("abcdefghij\n"), (Lines{"abcd", "efgh", "ij"}));
  EXPECT_EQ(splitter.feed("klmnop"), Lines{"klmn"});
  EXPECT_EQ(splitter.finish(), Lines{"op"});
}

TEST(LineSplitter, LineOfExactlyTheCapIsOneLine) {
  LineSplitter splitter(4);
  EXPECT_EQ(splitter.feed("abcd"), Lines{});
  EXPECT_EQ(splitter.feed("\nx"), Lines{"abcd"});
  EXPECT_EQ(splitter.feed("yz\n"), Lines{"xyz"});
  EXPECT_EQ(splitter.finish(), Lines{});
}

TEST(LineSplitter, KeepsBinaryBytes) {
  LineSplitter splitter;
  const std::string bytes("a\0b\xff\n", 5);
  EXPECT_EQ(splitter.feed(bytes), Lines{std::string("a\0b\xff", 4)});
}

}  // namespace
}  // namespace gpuscope::launch
