// The Prometheus API's answers and VictoriaMetrics' export lines, parsed by hand-written input:
// every result type, NaN and infinities, warnings, errors, and shapes that are not the API's.
#include "tsdb/answer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace gpuscope::tsdb {
namespace {

using nlohmann::json;

TEST(Answer, MatrixWithSpecialValuesAndMillisecondTimes) {
  const auto doc = answer_document(
      R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"foo","a":"1"},)"
      R"("values":[[1704067200,"1.5"],[1704067230.123,"+Inf"],[1704067245.5,"NaN"],[1704067250,"-Inf"],[1704067260,"1e+06"]]}]}})");
  const auto answer = query_answer(doc);
  EXPECT_EQ(answer.result_type, "matrix");
  ASSERT_EQ(answer.series.size(), 1u);
  const auto& s = answer.series[0];
  EXPECT_EQ(s.name(), "foo");
  ASSERT_NE(s.label("a"), nullptr);
  EXPECT_EQ(*s.label("a"), "1");
  ASSERT_EQ(s.points.size(), 5u);
  EXPECT_EQ(s.points[0].t_ms, 1704067200000);
  EXPECT_EQ(s.points[0].value, 1.5);
  EXPECT_EQ(s.points[1].t_ms, 1704067230123);
  EXPECT_TRUE(std::isinf(s.points[1].value) && s.points[1].value > 0);
  EXPECT_EQ(s.points[2].t_ms, 1704067245500);
  EXPECT_TRUE(std::isnan(s.points[2].value));
  EXPECT_TRUE(std::isinf(s.points[3].value) && s.points[3].value < 0);
  EXPECT_EQ(s.points[4].value, 1e6);
}

TEST(Answer, VectorScalarAndString) {
  auto vector = query_answer(answer_document(
      R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"g":"0"},"value":[10,"2"]},)"
      R"({"metric":{"g":"1"},"value":[10,"3"]}]}})"));
  ASSERT_EQ(vector.series.size(), 2u);
  EXPECT_EQ(vector.series[1].points.at(0).value, 3);
  EXPECT_EQ(vector.series[1].points.at(0).t_ms, 10000);
  auto scalar = query_answer(answer_document(
      R"({"status":"success","data":{"resultType":"scalar","result":[5.25,"7"]}})"));
  ASSERT_EQ(scalar.series.size(), 1u);
  EXPECT_TRUE(scalar.series[0].labels.empty());
  EXPECT_EQ(scalar.series[0].points.at(0).t_ms, 5250);
  EXPECT_EQ(scalar.series[0].points.at(0).value, 7);
  auto text = query_answer(
      answer_document(R"({"status":"success","data":{"resultType":"string","result":[1,"x"]}})"));
  EXPECT_TRUE(text.series.empty());
}

TEST(Answer, WarningsAndPartialAnswersAreCollected) {
  const auto doc =
      answer_document(R"({"status":"success","isPartial":true,"warnings":["store 2 down"],)"
                      R"("data":{"resultType":"vector","result":[]}})");
  const auto answer = query_answer(doc);
  ASSERT_EQ(answer.warnings.size(), 2u);
  EXPECT_EQ(answer.warnings[0], "store 2 down");
  EXPECT_NE(answer.warnings[1].find("isPartial"), std::string::npos);
}

TEST(Answer, ErrorsAreReadAndLimitErrorsRecognised) {
  const auto prometheus = answer_error(answer_document(
      R"j({"status":"error","errorType":"bad_data","error":"exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)"})j"));
  ASSERT_TRUE(prometheus);
  EXPECT_EQ(prometheus->type, "bad_data");
  EXPECT_TRUE(is_limit_error(*prometheus));
  const auto vm = answer_error(answer_document(
      R"({"status":"error","errorType":"422","error":"error when executing query=\"1\" on the time range (start=0, end=30001000, step=1000): too many points for the given step=1000, start=0 and end=30001000: 30002; cannot exceed -search.maxPointsPerTimeseries=30000"})"));
  ASSERT_TRUE(vm);
  EXPECT_TRUE(is_limit_error(*vm));
  const auto samples = answer_error(answer_document(
      R"({"status":"error","errorType":"execution","error":"query processing would load too many samples into memory in query execution"})"));
  EXPECT_TRUE(is_limit_error(*samples));
  const auto syntax = answer_error(answer_document(
      R"({"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": 1:5: parse error: unclosed left parenthesis"})"));
  ASSERT_TRUE(syntax);
  EXPECT_FALSE(is_limit_error(*syntax));
  EXPECT_FALSE(answer_error(answer_document(R"({"status":"success","data":[]})")));
}

TEST(Answer, SeriesAnswer) {
  const auto labels = series_answer(answer_document(
      R"({"status":"success","data":[{"__name__":"up","job":"a"},{"__name__":"up","job":"b"}]})"));
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_EQ(labels[1].at("job"), "b");
}

TEST(Answer, ShapesThatAreNotTheApisAreRefused) {
  EXPECT_THROW(answer_document("<html><body>Please log in</body></html>"), AnswerShapeError);
  EXPECT_THROW(answer_document(R"({"data":[]})"), AnswerShapeError);
  EXPECT_THROW(answer_document(R"({"status":"success","data":{"resultType":"matrix","res)"),
               AnswerShapeError);  // cut off
  EXPECT_THROW(
      query_answer(answer_document(
          R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"x"]]}]}})")),
      AnswerShapeError);
  EXPECT_THROW(query_answer(answer_document(
                   R"({"status":"success","data":{"resultType":"table","result":[]}})")),
               AnswerShapeError);
  EXPECT_THROW(
      query_answer(answer_document(
          R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":1},"value":[1,"1"]}]}})")),
      AnswerShapeError);
}

TEST(Answer, ExportLinesWithBareInfinitiesAndNaN) {
  const auto s = export_line(
      R"({"metric":{"__name__":"foo","a":"NaN Inf"},"values":[1.5,+Inf,-Inf,NaN,3],"timestamps":[1,2,3,4,5]})");
  EXPECT_EQ(*s.label("a"), "NaN Inf");  // words inside strings stay as they are
  ASSERT_EQ(s.points.size(), 5u);
  EXPECT_EQ(s.points[0].value, 1.5);
  EXPECT_TRUE(std::isinf(s.points[1].value) && s.points[1].value > 0);
  EXPECT_TRUE(std::isinf(s.points[2].value) && s.points[2].value < 0);
  EXPECT_TRUE(std::isnan(s.points[3].value));
  EXPECT_EQ(s.points[4].t_ms, 5);
  EXPECT_THROW(export_line(R"({"metric":{},"values":[1,2],"timestamps":[1]})"), AnswerShapeError);
  EXPECT_THROW(export_line(R"(remoteAddr: "127.0.0.1"; error)"), AnswerShapeError);
}

// A sample stamped 2^64 ns (about 584 years) after 2024-01-01: its nanoseconds wrap an int64
// back to 2024-01-01, inside the job. Before the fix the answer took it (times were bounded at
// 10^12 s) and the job's rows got a 9,999 W peak; now the time is refused where it is read.
TEST(Answer, TimesPastWhatNanosecondsHoldAreRefused) {
  constexpr std::int64_t kLateMs = 1704067200000 + 18446744073710;  // + 2^64 ns, in ms
  // What the wrap would have done: the late time lands on the job's.
  EXPECT_EQ(
      static_cast<std::int64_t>(static_cast<std::uint64_t>(kLateMs) * 1'000'000U) / 1'000'000'000,
      1704067200);
  EXPECT_FALSE(ns_of_ms(kLateMs));
  EXPECT_EQ(ns_of_ms(1704067200000), 1704067200000000000);
  EXPECT_EQ(ns_of_ms(kMaxTimeMs), kMaxTimeMs * 1'000'000);
  EXPECT_FALSE(ns_of_ms(kMaxTimeMs + 1));
  EXPECT_FALSE(ns_of_ms(-kMaxTimeMs - 1));

  const std::string late = std::to_string(kLateMs / 1000) + ".71";
  const auto doc = answer_document(
      R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"p"},)"
      R"("values":[[1704067200,"300"],[)" +
      late + R"(,"9999"]]}]}})");
  try {
    query_answer(doc);
    ADD_FAILURE() << "a time past 2262 was taken";
  } catch (const AnswerShapeError& e) {
    EXPECT_NE(e.what.find("past 2262-04-11"), std::string::npos) << e.what;
  }
  EXPECT_THROW(sample_time_ms(json(late)), AnswerShapeError);
  EXPECT_THROW(sample_time_ms(json(-1e10)), AnswerShapeError);
  EXPECT_EQ(sample_time_ms(json(9.2e9)), 9'200'000'000'000);  // 2261: still held

  EXPECT_THROW(export_line(R"({"metric":{},"values":[300,9999],"timestamps":[1704067200000,)" +
                           std::to_string(kLateMs) + "]}"),
               AnswerShapeError);
  EXPECT_THROW(export_line(R"({"metric":{},"values":[1],"timestamps":[18446744073709551615]})"),
               AnswerShapeError);
}

TEST(Answer, ShortenedQueries) {
  EXPECT_EQ(shortened("up"), "up");
  EXPECT_EQ(shortened(std::string(200, 'a'), 10), std::string(10, 'a') + "…");
  EXPECT_EQ(shortened("a\nb"), "a b");
}

}  // namespace
}  // namespace gpuscope::tsdb
