// store/grid_tables against a real SQLite file: each period's kind is stored as its word (the
// spelling run databases have always had), read back as the same kind, and a word this gpuscope
// does not know reads back as itself.
#include "store/grid_tables.hpp"

#include <gtest/gtest.h>

#include "store/run_writer.hpp"
#include "store_test_data.hpp"
#include "support/sql.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::store {
namespace {

using gpuscope::testing::TempDir;

constexpr std::int64_t kHourNs = 3600LL * 1'000'000'000;

TEST(GridTables, KindsAreStoredAsTheirWords) {
  TempDir dir;
  const auto path = dir.file("run.db");
  RunWriter::create(path, false, testing::make_run(), testing::make_devices(1))->finish({});
  IntensitySeries series;
  series.source = "Electricity Maps";
  series.region = "DE";
  const IntensityKind kinds[] = {IntensityKind::Actual, IntensityKind::Estimated,
                                 IntensityKind::Forecast, IntensityKind::Given};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto hour = static_cast<std::int64_t>(i);
    series.periods.push_back(
        {hour * kHourNs, (hour + 1) * kHourNs, 100.0 + static_cast<double>(i), kinds[i]});
  }
  save_grid_series(path, "electricitymaps:DE", series, 5);
  EXPECT_EQ(gpuscope::testing::scalar(
                path,
                "SELECT group_concat(kind, ',') FROM (SELECT kind FROM grid_intensity "
                "ORDER BY start_wall_ns)"),
            "actual,estimated,forecast,given");
  // A newer gpuscope's word: kept as it was stored.
  gpuscope::testing::run_sql(path,
                             "UPDATE grid_intensity SET kind = 'modelled' WHERE g_per_kwh = 103");
  const auto loaded = load_grid_series(path, "electricitymaps:DE");
  ASSERT_TRUE(loaded);
  ASSERT_EQ(loaded->periods.size(), 4U);
  EXPECT_EQ(loaded->periods[0].kind, IntensityKind::Actual);
  EXPECT_EQ(loaded->periods[1].kind, IntensityKind::Estimated);
  EXPECT_EQ(loaded->periods[2].kind, IntensityKind::Forecast);
  EXPECT_EQ(loaded->periods[3].kind, IntensityKind::Other);
  EXPECT_EQ(loaded->periods[3].kind.text(), "modelled");
}

}  // namespace
}  // namespace gpuscope::store
