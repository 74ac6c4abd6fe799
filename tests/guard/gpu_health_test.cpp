// fleet::read_gpu_health against answers given by hand: each figure from the series names of
// gpuscope serve and dcgm-exporter, one entry per GPU whichever query named it, the node spelled
// as sinfo spells it, and a GPU that stopped reporting while its samples are in the window.
#include "fleet/gpu_health.hpp"

#include <gtest/gtest.h>

#include "health_source.hpp"

namespace gpuscope::fleet {
namespace {

using guard::testing::HealthSource;

constexpr std::int64_t kNow = 1795924200000;

TEST(GpuHealth, EachFigureFromEachFamily) {
  HealthSource source;
  const HealthWindow w{kNow - 600'000, kNow, kNow - 90'000};
  source.recent_range_ms = 90'999;
  const tsdb::Labels a = {{"uuid", "GPU-A"}, {"gpu", "0"}, {"hostname", "n1.cluster.example"}};
  const tsdb::Labels b = {{"UUID", "GPU-B"}, {"gpu", "1"}, {"Hostname", "n2"}};
  source.add("last:gpuscope_gpu_xid_last", a, 79);
  source.add("max:gpuscope_gpu_xid_last", a, 79);
  source.add("increase:gpuscope_gpu_xid_errors_total", a, 1.4);
  source.add("rise:gpuscope_gpu_ecc_errors_total", a, 0);
  source.add("count:gpuscope_gpu_util_ratio", a, 20);
  source.add("recent:gpuscope_gpu_util_ratio", a, 3);
  source.add("last:DCGM_FI_DEV_XID_ERRORS", b, 13);
  source.add("max:DCGM_FI_DEV_XID_ERRORS", b, 48);
  source.add("changes:DCGM_FI_DEV_XID_ERRORS", b, 2);
  source.add("rise:DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", b, 2);
  source.add("max:DCGM_FI_DEV_ROW_REMAP_FAILURE", b, 1);
  source.add("count:DCGM_FI_DEV_GPU_UTIL", b, 20);  // none recent: it stopped reporting
  const auto gpus = read_gpu_health(source, w, {"n1", "n2"});
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].node, "n1");  // as sinfo spells it
  EXPECT_EQ(gpus[0].gpu, "GPU-A");
  EXPECT_EQ(gpus[0].xid_last, 79);
  EXPECT_EQ(gpus[0].xid_events, 1.4);
  EXPECT_EQ(gpus[0].uncorrected_ecc, 0);
  EXPECT_FALSE(gpus[0].remap_failure);
  EXPECT_TRUE(gpus[0].reporting);
  EXPECT_EQ(gpus[1].node, "n2");
  EXPECT_EQ(gpus[1].xid_last, 13);
  EXPECT_EQ(gpus[1].xid_max, 48);
  EXPECT_EQ(gpus[1].xid_events, 2);
  EXPECT_EQ(gpus[1].uncorrected_ecc, 2);
  EXPECT_EQ(gpus[1].remap_failure, 1);
  EXPECT_FALSE(gpus[1].reporting);
  // Every query is an instant one over the window, grouped by GPU: never the samples.
  for (const auto& expr : source.asked) {
    EXPECT_NE(expr.find("by (uuid, UUID"), std::string::npos) << expr;
    EXPECT_NE(expr.find("@ 1795924200.999"), std::string::npos) << expr;
  }
}

TEST(GpuHealth, AServerFailureIsAnError) {
  HealthSource source;
  source.fail = true;
  EXPECT_THROW(read_gpu_health(source, {kNow - 600'000, kNow, kNow - 90'000}, {}), Error);
}

}  // namespace
}  // namespace gpuscope::fleet
