// How long queries are cut into pieces, and how the pieces' series are joined.
#include "tsdb/pieces.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace gpuscope::tsdb {
namespace {

TEST(Pieces, RangeSplitCoversEveryEvaluationTimeOnce) {
  const Window w{1000, 1000 + 25'000 * 15'000};  // 25,001 points at 15 s
  const auto pieces = split_range(w, 15'000, 11'000);
  ASSERT_EQ(pieces.size(), 3u);
  std::int64_t total = 0;
  std::int64_t expected_start = w.start_ms;
  for (const auto& p : pieces) {
    EXPECT_EQ(p.start_ms, expected_start);
    EXPECT_LE(points_in(p, 15'000), 11'000);
    total += points_in(p, 15'000);
    expected_start = p.end_ms + 15'000;
  }
  EXPECT_EQ(total, 25'001);
  EXPECT_EQ(pieces.back().end_ms, w.end_ms);
}

TEST(Pieces, RangeSplitOfAnUnalignedEndStopsAtTheLastStep) {
  const auto pieces = split_range(Window{0, 10'500}, 1000, 4);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].end_ms, 3000);
  EXPECT_EQ(pieces[2].start_ms, 8000);
  EXPECT_EQ(pieces[2].end_ms, 10'000);
  EXPECT_TRUE(split_range(Window{10, 5}, 1000, 4).empty());
  EXPECT_EQ(split_range(Window{5, 5}, 1000, 4).size(), 1u);
}

TEST(Pieces, RawPieceLengthKeepsSamplesBounded) {
  // 640 series at most one sample a second, 2 M samples a piece: 3125 s.
  EXPECT_EQ(raw_piece_ms(640, 2'000'000, 1000, 86'400'000), 3'125'000);
  EXPECT_EQ(raw_piece_ms(1, 2'000'000, 1000, 60'000), 60'001);  // never past the window
  EXPECT_EQ(raw_piece_ms(10'000'000, 1, 1000, 60'000), 1000);   // never under a second
  EXPECT_EQ(next_raw_piece_ms(1000'000, 10, 1'000'000), 4'000'000);
  EXPECT_EQ(next_raw_piece_ms(1000'000, 2'000'000, 1'000'000), 500'000);
}

TEST(Pieces, JoinerDropsBoundarySamplesAndKeepsOrder) {
  SeriesJoiner joiner(100, "test");
  Series a{{{"__name__", "a"}}, {{1, 1}, {2, 2}}};
  Series b{{{"__name__", "b"}}, {{2, 20}}};
  joiner.add(a);
  joiner.add(b);
  joiner.add(Series{{{"__name__", "a"}}, {{2, 2}, {3, 3}}});     // 2 is the boundary
  joiner.add(Series{{{"__name__", "a"}}, {{0, 0}, {4, 4}}}, 1);  // 0 is before the window
  EXPECT_EQ(joiner.points(), 5u);
  const auto out = joiner.take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name(), "a");
  ASSERT_EQ(out[0].points.size(), 4u);
  EXPECT_EQ(out[0].points[3].t_ms, 4);
  EXPECT_EQ(out[1].points.size(), 1u);
}

TEST(Pieces, JoinerSortsOutOfOrderPieces) {
  SeriesJoiner joiner(100, "test");
  joiner.add(Series{{{"k", "v"}}, {{5, 5}, {6, 6}}});
  joiner.add(Series{{{"k", "v"}}, {{1, 1}, {5, 5}}});
  const auto out = joiner.take();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].points.size(), 3u);
  EXPECT_EQ(out[0].points[0].t_ms, 1);
  EXPECT_EQ(out[0].points[2].t_ms, 6);
}

TEST(Pieces, JoinerThrowsPastMaxPoints) {
  SeriesJoiner joiner(3, "`up`");
  joiner.add(Series{{{"k", "v"}}, {{1, 1}, {2, 2}, {3, 3}}});
  try {
    joiner.add(Series{{{"k", "w"}}, {{1, 1}}});
    FAIL() << "no Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than 3 samples would come back for `up`"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gpuscope::tsdb
