// The simulated DCGM on a manual clock: connections, groups, watches, the profiling fields as
// averages of the same model the simulated NVML reads, metric groups, and every scenario fault.
#include "sim/dcgm_sim.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>

#include "sim/gpu_model.hpp"
#include "test_support.hpp"

namespace gpuscope::sim::testing {
namespace {

constexpr const char* kPhases = R"("phases": [
    {"name": "idle", "duration_s": 1},
    {"name": "compute", "duration_s": 100, "util": 90, "sm_active": 80, "sm_occupancy": 40,
     "tensor": 50, "fp64": 5, "fp32": 30, "fp16": 10, "dram": 60, "pcie_tx_mibps": 100,
     "pcie_rx_mibps": 700, "nvlink_tx_mibps": 2000, "nvlink_rx_mibps": 2000,
     "memory_used_gib": 20, "noise": 0}])";

class DcgmSimTest : public ::testing::Test {
 protected:
  // Loads a scenario of two GPUs of `model` with `dcgm` as its "dcgm" object ("" for none).
  dcgmReturn_t load(const std::string& dcgm, const std::string& model = "A100-SXM4-80GB") {
    const std::string path = dir_.file("scenario.json");
    std::ofstream(path) << R"({"name": "t", "seed": 3, )" << kPhases
                        << (dcgm.empty() ? "" : R"(, "dcgm": )" + dcgm)
                        << R"(, "gpus": {"count": 2, "template": {"model": ")" << model
                        << R"("}}})";
    DriverOptions options;
    options.scenario_path = path;
    options.state_path = dir_.file("state.json");
    options.epoch_ns = ManualClock::kStart;
    return sim_.init(options);
  }

  dcgmHandle_t embedded() {
    dcgmStartEmbeddedV2Params_v2 params{};
    params.version = dcgm::kStartEmbeddedV2ParamsVersion2;
    params.opMode = dcgm::kOperationModeAuto;
    EXPECT_EQ(sim_.start_embedded(&params), dcgm::kOk) << sim_.last_error();
    return params.dcgmHandle;
  }

  dcgmReturn_t connect(const char* address, dcgmHandle_t& handle) {
    dcgmConnectV2Params_v2 params{};
    params.version = dcgm::kConnectV2ParamsVersion;
    return sim_.connect(address, &params, &handle);
  }

  // Watches `fields` on GPU `gpu` every 100 ms.
  dcgmReturn_t watch(dcgmHandle_t h, std::vector<unsigned short> fields, unsigned gpu = 0) {
    dcgmGpuGrp_t group = 0;
    dcgmFieldGrp_t field_group = 0;
    EXPECT_EQ(sim_.group_create(h, dcgm::kGroupEmpty, "g", &group), dcgm::kOk);
    EXPECT_EQ(sim_.group_add_device(h, group, gpu), dcgm::kOk);
    const dcgmReturn_t made = sim_.field_group_create(h, static_cast<int>(fields.size()),
                                                      fields.data(), "f", &field_group);
    if (made != dcgm::kOk) return made;
    return sim_.watch(h, group, field_group, 100'000, 10, 0);
  }

  std::vector<dcgmFieldValue_v2> read(dcgmHandle_t h, std::vector<unsigned short> fields,
                                      unsigned gpu = 0, unsigned flags = 0) {
    std::vector<dcgmFieldValue_v2> values(fields.size());
    dcgmGroupEntityPair_t entity{dcgm::kEntityGpu, gpu};
    EXPECT_EQ(sim_.latest_values(h, &entity, 1, fields.data(), static_cast<unsigned>(fields.size()),
                                 flags, values.data()),
              dcgm::kOk);
    return values;
  }

  TempDir dir_;
  ManualClock clock_;
  DcgmSim sim_{clock_};
};

TEST_F(DcgmSimTest, AScenarioWithoutDcgmHasNone) {
  EXPECT_EQ(load(""), -25);
  EXPECT_NE(std::string(sim_.last_error()).find("no \"dcgm\" object"), std::string::npos);
}

TEST_F(DcgmSimTest, ConnectsOnlyToTheScenariosHostEngine) {
  ASSERT_EQ(load(R"({"hostengine": "localhost:5555"})"), dcgm::kOk);
  dcgmHandle_t h = 0;
  EXPECT_EQ(connect("127.0.0.1", h), dcgm::kOk);
  EXPECT_EQ(connect("localhost:5555", h), dcgm::kOk);
  EXPECT_EQ(connect("localhost:5556", h), dcgm::kConnectionNotValid);
  EXPECT_NE(std::string(sim_.last_error()).find("localhost:5555"), std::string::npos);
  EXPECT_EQ(sim_.disconnect(h), dcgm::kOk);
  EXPECT_EQ(sim_.disconnect(h), -1) << "a handle is good once";
  dcgmConnectV2Params_v2 old{};
  old.version = 1;
  EXPECT_EQ(sim_.connect("localhost", &old, &h), -12) << "a wrong struct version is refused";
}

TEST_F(DcgmSimTest, NoHostEngineMeansEmbeddedOnly) {
  ASSERT_EQ(load("{}"), dcgm::kOk);
  dcgmHandle_t h = 0;
  EXPECT_EQ(connect("localhost", h), dcgm::kConnectionNotValid);
  const dcgmHandle_t e = embedded();
  unsigned ids[32];
  int count = 0;
  ASSERT_EQ(sim_.supported_devices(e, ids, &count), dcgm::kOk);
  EXPECT_EQ(count, 2);
  EXPECT_EQ(sim_.stop_embedded(e), dcgm::kOk);
  EXPECT_EQ(sim_.supported_devices(e, ids, &count), dcgm::kConnectionNotValid);
}

TEST_F(DcgmSimTest, ProfilingFieldsAreIntervalAveragesOfTheModel) {
  ASSERT_EQ(load("{}"), dcgm::kOk);
  const dcgmHandle_t h = embedded();
  clock_.set_scenario_s(10);
  const std::vector<unsigned short> fields = {1002, 1004, 1010, 1011, 203, 252};
  ASSERT_EQ(watch(h, fields), dcgm::kOk) << sim_.last_error();
  // One sample at the watch: no average yet.
  auto values = read(h, fields);
  EXPECT_EQ(values[0].status, dcgm::kNoData);
  EXPECT_TRUE(dcgm::is_blank(values[0].value.dbl));
  // Device fields need no second sample.
  EXPECT_EQ(values[4].status, dcgm::kOk);
  EXPECT_EQ(values[4].value.i64, 90);
  EXPECT_EQ(values[5].value.i64, 20 * 1024);
  clock_.advance_ns(150'000'000);
  values = read(h, fields);
  ASSERT_EQ(values[0].status, dcgm::kOk);
  EXPECT_EQ(values[0].fieldType, dcgm::kTypeDouble);
  EXPECT_NEAR(values[0].value.dbl, 0.80, 1e-9) << "a ratio, not percent";
  EXPECT_NEAR(values[1].value.dbl, 0.50, 1e-9);
  EXPECT_EQ(values[2].fieldType, dcgm::kTypeInt64);
  EXPECT_EQ(values[2].value.i64, 700LL * 1024 * 1024) << "bytes per second";
  EXPECT_EQ(values[3].value.i64, 2000LL * 1024 * 1024);
  EXPECT_EQ(values[0].ts, (ManualClock::kStart + 10'150'000'000) / 1000);
  // Before the next update falls due the value (and its timestamp) stay.
  clock_.advance_ns(20'000'000);
  EXPECT_EQ(read(h, fields)[0].ts, values[0].ts);
}

TEST_F(DcgmSimTest, AnAverageSpansTheIdleToComputeEdge) {
  ASSERT_EQ(load("{}"), dcgm::kOk);
  const dcgmHandle_t h = embedded();
  clock_.set_scenario_s(0.5);
  ASSERT_EQ(watch(h, {1002}), dcgm::kOk);
  clock_.set_scenario_s(1.5);  // half idle, half computing at 80 %
  EXPECT_NEAR(read(h, {1002})[0].value.dbl, 0.40, 0.01);
}

TEST_F(DcgmSimTest, UnwatchedFieldsSayNotWatchedUnlessReadLive) {
  ASSERT_EQ(load("{}"), dcgm::kOk);
  const dcgmHandle_t h = embedded();
  EXPECT_EQ(read(h, {203})[0].status, dcgm::kNotWatched);
  EXPECT_EQ(read(h, {1002})[0].status, dcgm::kNotWatched);
  const auto uuid = read(h, {54}, 1, 1);
  EXPECT_EQ(uuid[0].status, dcgm::kOk);
  EXPECT_EQ(std::string(uuid[0].value.str).rfind("GPU-", 0), 0U) << uuid[0].value.str;
}

TEST_F(DcgmSimTest, AmpereSharesItsSmCountersHopperDoesNot) {
  ASSERT_EQ(load("{}"), dcgm::kOk);
  const dcgmHandle_t h = embedded();
  dcgmProfGetMetricGroups_v3 groups{};
  groups.version = dcgm::kProfGetMetricGroupsVersion3;
  ASSERT_EQ(sim_.metric_groups(h, &groups), dcgm::kOk);
  std::map<unsigned, int> minors;
  for (unsigned i = 0; i < groups.numMetricGroups; ++i) ++minors[groups.metricGroups[i].majorId];
  EXPECT_EQ(minors[0], 3) << "SM active and occupancy with one pipe group at a time";
  const auto a100 = dcgm_metric_groups(*find_builtin_model("A100-SXM4-80GB"));
  EXPECT_TRUE(dcgm_single_pass(a100, {1002, 1003, 1004, 1007, 1005}));
  EXPECT_FALSE(dcgm_single_pass(a100, {1004, 1006}));
  const auto h100 = dcgm_metric_groups(*find_builtin_model("H100-SXM5-80GB"));
  EXPECT_TRUE(dcgm_single_pass(
      h100, {1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012}));
  groups.version = 1;
  EXPECT_EQ(sim_.metric_groups(h, &groups), -12);
}

TEST_F(DcgmSimTest, MultipassFaultRefusesFieldsThatNeedTwoPasses) {
  ASSERT_EQ(load(R"({"multipass": true})"), dcgm::kOk);
  const dcgmHandle_t h = embedded();
  EXPECT_EQ(watch(h, {1002, 1004, 1006}), dcgm::kProfilingMultiPass);
  EXPECT_EQ(watch(h, {1002, 1004, 1007, 1005}), dcgm::kOk) << sim_.last_error();
}

TEST_F(DcgmSimTest, ProfilingModuleFaults) {
  ASSERT_EQ(load(R"({"profiling": "module_missing"})"), dcgm::kOk);
  dcgmHandle_t h = embedded();
  EXPECT_EQ(watch(h, {1002}), dcgm::kModuleNotLoaded);
  EXPECT_EQ(watch(h, {203}), dcgm::kOk) << "device fields need no profiling module";
  dcgmProfGetMetricGroups_v3 groups{};
  groups.version = dcgm::kProfGetMetricGroupsVersion3;
  EXPECT_EQ(sim_.metric_groups(h, &groups), dcgm::kModuleNotLoaded);
  sim_.shutdown();
  ASSERT_EQ(load(R"({"profiling": "unsupported"})"), dcgm::kOk);
  h = embedded();
  EXPECT_EQ(watch(h, {1002}), dcgm::kProfilingNotSupported);
}

TEST_F(DcgmSimTest, MetricGroupsAnswerAsOftenAsTheScenarioSays) {
  ASSERT_EQ(load(R"({"metric_groups_answers": 2})"), dcgm::kOk);
  const dcgmHandle_t h = embedded();
  dcgmProfGetMetricGroups_v3 groups{};
  groups.version = dcgm::kProfGetMetricGroupsVersion3;
  EXPECT_EQ(sim_.metric_groups(h, &groups), dcgm::kOk);
  EXPECT_EQ(sim_.metric_groups(h, &groups), dcgm::kOk);
  EXPECT_EQ(sim_.metric_groups(h, &groups), dcgm::kConnectionNotValid);
  EXPECT_NE(std::string(sim_.last_error()).find("metric_groups_answers"), std::string::npos);
}

TEST_F(DcgmSimTest, FieldGroupsRefused) {
  ASSERT_EQ(load(R"({"refuse_field_groups": true})"), dcgm::kOk);
  EXPECT_EQ(watch(embedded(), {1002}), -24);
}

TEST_F(DcgmSimTest, EmbeddedBesideAHostEngineFindsTheCountersInUse) {
  ASSERT_EQ(load(R"({"hostengine": true})"), dcgm::kOk);
  const dcgmHandle_t e = embedded();
  EXPECT_EQ(watch(e, {1002}), dcgm::kInUse);
  EXPECT_NE(std::string(sim_.last_error()).find("nv-hostengine"), std::string::npos);
  dcgmHandle_t h = 0;
  ASSERT_EQ(connect("localhost", h), dcgm::kOk);
  EXPECT_EQ(watch(h, {1002}), dcgm::kOk);
}

TEST_F(DcgmSimTest, CountersTakenByAnotherProfilerGiveBlanks) {
  ASSERT_EQ(load(R"({"counters_taken": [{"from_s": 20, "to_s": 30}]})"), dcgm::kOk);
  const dcgmHandle_t h = embedded();
  clock_.set_scenario_s(10);
  ASSERT_EQ(watch(h, {1002, 1010}), dcgm::kOk);
  clock_.set_scenario_s(10.2);
  EXPECT_FALSE(dcgm::is_blank(read(h, {1002})[0].value.dbl));
  clock_.set_scenario_s(25);
  read(h, {1002});
  clock_.set_scenario_s(25.2);
  const auto taken = read(h, {1002, 1010});
  EXPECT_EQ(taken[0].status, dcgm::kOk);
  EXPECT_TRUE(dcgm::is_blank(taken[0].value.dbl));
  EXPECT_TRUE(dcgm::is_blank(taken[1].value.i64));
  clock_.set_scenario_s(31);
  read(h, {1002});
  clock_.set_scenario_s(31.2);
  EXPECT_NEAR(read(h, {1002})[0].value.dbl, 0.80, 1e-9);
}

TEST_F(DcgmSimTest, ALostGpuSaysSo) {
  const std::string path = dir_.file("lost.json");
  std::ofstream(path) << R"({"name": "t", )" << kPhases
                      << R"(, "dcgm": {}, "gpus": [{"model": "A100-SXM4-80GB",
                             "faults": {"lost_at_s": 5}}]})";
  DriverOptions options;
  options.scenario_path = path;
  options.epoch_ns = ManualClock::kStart;
  ASSERT_EQ(sim_.init(options), dcgm::kOk) << sim_.last_error();
  const dcgmHandle_t h = embedded();
  clock_.set_scenario_s(2);
  ASSERT_EQ(watch(h, {1002, 203}), dcgm::kOk);
  clock_.set_scenario_s(6);
  const auto values = read(h, {1002, 203});
  EXPECT_EQ(values[0].status, dcgm::kGpuIsLost);
  EXPECT_EQ(values[1].status, dcgm::kGpuIsLost);
}

TEST_F(DcgmSimTest, ScenarioParserChecksTheDcgmObject) {
  auto parse = [](const std::string& dcgm) {
    return parse_scenario(std::string(R"({"name": "t", )") + kPhases + R"(, "dcgm": )" + dcgm +
                              R"(, "gpus": [{"model": "A100-SXM4-80GB"}]})",
                          "x.json");
  };
  auto error_of = [&](const std::string& dcgm) {
    auto result = parse(dcgm);
    return result ? std::string("no error") : result.error();
  };
  EXPECT_NE(error_of(R"({"profiling": "maybe"})").find("/dcgm/profiling"), std::string::npos);
  EXPECT_NE(error_of(R"({"hostengin": true})").find("hostengin"), std::string::npos);
  EXPECT_NE(error_of(R"({"counters_taken": [{"from_s": 5, "to_s": 4}]})").find("after from_s"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"hostengine": false})").find("/dcgm/hostengine"), std::string::npos);
  const auto ok = parse(R"({"hostengine": "unix:/run/he.sock", "embedded": false})");
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ(ok->dcgm->hostengine, "unix:/run/he.sock");
  EXPECT_FALSE(ok->dcgm->embedded);
  EXPECT_FALSE(must_parse(std::string(R"({"name": "t", )") + kPhases +
                          R"(, "gpus": [{"model": "A100-SXM4-80GB"}]})")
                   .dcgm)
      << "no \"dcgm\" object: no DCGM";
}

}  // namespace
}  // namespace gpuscope::sim::testing
