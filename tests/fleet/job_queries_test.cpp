// The PromQL asked for a job: its window as a range and an @ time that hold sacct's whole
// seconds, each reduction as the server must read it (VictoriaMetrics' exact idle share,
// Prometheus' subquery), and job ids that cannot close the string they are put in.
#include "fleet/job_queries.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fleet/gpu_aggregates.hpp"
#include "promql_text.hpp"

namespace gpuscope::fleet {
namespace {

using testing::lex_promql;
using testing::occurrences;

constexpr std::int64_t kStart = 1795924200000;
const std::string kSel = R"(gpuscope_gpu_util_ratio{uuid="GPU-1"})";

AggregateJob job(std::int64_t seconds) {
  return {"42", kStart, kStart + seconds * 1000, {"n1"}};
}

// Parentheses, brackets and braces outside strings close in order.
bool balanced(const std::string& shape) {
  std::string open;
  for (const char c : shape) {
    if (c == '(' || c == '[' || c == '{') open += c;
    if (c == ')' || c == ']' || c == '}') {
      const char want = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (open.empty() || open.back() != want) return false;
      open.pop_back();
    }
  }
  return open.empty();
}

TEST(JobQueries, TheWindowHoldsSacctsWholeSeconds) {
  const JobWindowText w = window_text(job(49));
  EXPECT_EQ(w.at, "@ 1795924249.999");
  EXPECT_EQ(w.at_ms, kStart + 49'999);
  EXPECT_EQ(w.range, "50000ms");
  EXPECT_EQ(w.range_ms, 50'000);
  // A range selector holds (at - range, at]: from the start's millisecond to before End + 1 s.
  EXPECT_EQ(w.at_ms - w.range_ms, kStart - 1);

  const JobWindowText none = window_text(job(0));
  EXPECT_EQ(none.range, "1000ms") << "a job that started and ended in one second";
  EXPECT_EQ(none.at, "@ 1795924200.999");
}

TEST(JobQueries, EveryReductionAddsUpAGpusSeriesWithAndWithoutJobLabels) {
  const JobWindowText w = window_text(job(49));
  const std::string over = kSel + "[50000ms] @ 1795924249.999";
  for (const Reduce r :
       {Reduce::Mean, Reduce::Count, Reduce::Idle, Reduce::Max, Reduce::Rise, Reduce::Changes}) {
    for (const auto kind : {tsdb::ServerKind::Prometheus, tsdb::ServerKind::VictoriaMetrics}) {
      const std::string expr = reduce_expr({r, 1, kind}, kSel, w);
      const auto text = lex_promql(expr);
      EXPECT_TRUE(balanced(text.shape)) << expr;
      EXPECT_NE(text.shape.find("by (uuid, UUID, gpu_uuid, gpu, "), std::string::npos) << expr;
      EXPECT_NE(text.shape.find("hostname, Hostname, node, nodename, instance)"), std::string::npos)
          << expr;
      for (const char* workload : {"slurm_job_id", "hpc_job", "jobid", "pod"}) {
        EXPECT_EQ(text.shape.find(workload), std::string::npos) << workload << " kept in " << expr;
      }
    }
  }
  const auto vm = tsdb::ServerKind::VictoriaMetrics;
  const std::string by =
      "(uuid, UUID, gpu_uuid, gpu, minor_number, modelName, model_name, name, "
      "GPU_I_ID, GPU_I_PROFILE, gpu_instance_id, mig_profile, mig_uuid, "
      "hostname, Hostname, node, nodename, instance)";
  EXPECT_EQ(reduce_expr({Reduce::Mean, 0, vm}, kSel, w), "sum by " + by + " (sum_over_time(" +
                                                             over + ")) / sum by " + by +
                                                             " (count_over_time(" + over + "))");
  EXPECT_EQ(reduce_expr({Reduce::Count, 0, vm}, kSel, w),
            "sum by " + by + " (count_over_time(" + over + "))");
  EXPECT_EQ(reduce_expr({Reduce::Max, 0, vm}, kSel, w),
            "max by " + by + " (max_over_time(" + over + "))");
  EXPECT_EQ(reduce_expr({Reduce::Rise, 0, vm}, kSel, w), "max by " + by + " (max_over_time(" +
                                                             over + ")) - min by " + by +
                                                             " (min_over_time(" + over + "))");
  EXPECT_EQ(reduce_expr({Reduce::Changes, 0, vm}, kSel, w),
            "sum by " + by + " (changes(" + over + "))");
}

TEST(JobQueries, VictoriaMetricsCountsTheStoredIdleSamples) {
  const std::string expr = reduce_expr({Reduce::Idle, 0.01, tsdb::ServerKind::VictoriaMetrics},
                                       kSel, window_text(job(49)));
  EXPECT_NE(expr.find("(count_le_over_time(" + kSel + "[50000ms] @ 1795924249.999, 0.01))"),
            std::string::npos)
      << expr;
  EXPECT_NE(expr.find(" / sum by "), std::string::npos) << expr;
  EXPECT_EQ(expr.find("<= bool"), std::string::npos) << expr;
}

// Prometheus' idle share is a subquery at one fixed step whatever the window, whose evaluation
// times Prometheus aligns to the clock: a job's share is the same in any batch.
TEST(JobQueries, PrometheusAsksTheIdleShareOnAFixedGrid) {
  const auto prometheus = tsdb::ServerKind::Prometheus;
  const std::string expr =
      reduce_expr({Reduce::Idle, 0.01, prometheus}, kSel, window_text(job(49)));
  EXPECT_EQ(expr.find("count_le_over_time"), std::string::npos) << "not a Prometheus function";
  EXPECT_NE(
      expr.find("(sum_over_time((" + kSel + " <= bool 0.01)[50000ms:2000ms] @ 1795924249.999))"),
      std::string::npos)
      << expr;
  EXPECT_NE(expr.find("(count_over_time(" + kSel + "[50000ms:2000ms] @ 1795924249.999))"),
            std::string::npos)
      << expr;
  for (const int seconds : {4, 86'400}) {
    const std::string other =
        reduce_expr({Reduce::Idle, 1, prometheus}, kSel, window_text(job(seconds)));
    EXPECT_NE(other.find(":2000ms]"), std::string::npos) << "the same step: " << other;
  }
  ReduceAsk finer{Reduce::Idle, 1, prometheus, 5000};
  EXPECT_NE(reduce_expr(finer, kSel, window_text(job(86'400))).find(":5000ms]"), std::string::npos);
}

TEST(JobQueries, HostileJobIdsStayInsideTheirStrings) {
  const std::vector<std::string> ids = {
      R"(7") or vector(1) or label_replace(up, "x)",
      "8\\\" or on() vector(2) #",
      "9\nnewline\ttab\x01 and ü",
      R"(\)",
  };
  const std::vector<std::string> pieces(ids.size(), "up{job=\"node\"}");
  const std::string expr = joined_pieces(pieces, ids);
  const auto text = lex_promql(expr);
  EXPECT_TRUE(balanced(text.shape)) << expr;
  EXPECT_EQ(occurrences(text.shape, "label_replace("), ids.size()) << text.shape;
  EXPECT_EQ(occurrences(text.shape, " or "), ids.size() - 1) << text.shape;
  EXPECT_EQ(text.shape.find("vector"), std::string::npos) << text.shape;
  // Per piece: the piece's own string, the mark's name, the id, and the two empty ones.
  ASSERT_EQ(text.strings.size(), 5 * ids.size()) << text.shape;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(text.strings[5 * i + 1], kJobMark);
    EXPECT_EQ(text.strings[5 * i + 2], ids[i]) << "id " << i << " read back as another";
    EXPECT_EQ(text.strings[5 * i + 3], "");
    EXPECT_EQ(text.strings[5 * i + 4], "");
  }
  EXPECT_EQ(joined_pieces({"up"}, {"1"}), R"(label_replace(up, "gpuscope_job", "1", "", ""))");
  EXPECT_EQ(joined_pieces({}, {}), "");
}

}  // namespace
}  // namespace gpuscope::fleet
