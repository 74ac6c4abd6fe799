// health-check's verdict: the GPUs' counters as the GPU interface describes them (a lost GPU,
// uncorrected ECC errors, remaps, fewer GPUs than expected), and dcgmi diag's JSON of DCGM 3
// and DCGM 4 (fixtures written to NVIDIA's published shapes, with a line before the JSON, null
// entries, upper- and mixed-case statuses, warnings as words and as objects).
#include "guard/node_check.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace gpuscope::guard {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(GPUSCOPE_TEST_FIXTURE_DIR) + "/dcgm-diag/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

DeviceDescription gpu(unsigned index) {
  DeviceDescription d;
  d.index = index;
  d.uuid = "GPU-" + std::to_string(index);
  HealthRow row;
  row.set(HealthMetric::EccEnabled, 1);
  row.set(HealthMetric::EccUncorrectedVolatile, 0);
  row.set(HealthMetric::RowRemapFailure, 0);
  row.set(HealthMetric::RowRemapPending, 0);
  d.health = row;
  return d;
}

TEST(NodeCheck, AHealthyNode) {
  SystemDescription s;
  for (unsigned i = 0; i < 4; ++i) s.devices.push_back(gpu(i));
  const NodeCheck c = check_gpus(HealthRule{}, s, 4);
  EXPECT_TRUE(c.healthy());
  EXPECT_EQ(c.gpus, 4u);
  EXPECT_EQ(c.reason(), "");
}

TEST(NodeCheck, FailuresAndWarnings) {
  SystemDescription s;
  for (unsigned i = 0; i < 4; ++i) s.devices.push_back(gpu(i));
  s.devices[1].health->set(HealthMetric::EccUncorrectedVolatile, 3);
  s.devices[2].health->set(HealthMetric::RowRemapPending, 1);
  s.devices[3].health->set(HealthMetric::EccEnabled, 0);
  DeviceDescription mig;  // a MIG device is its GPU's: not counted
  mig.index = 1000;
  mig.mig = MigIdentity{};
  s.devices.push_back(mig);
  NodeCheck c = check_gpus(HealthRule{}, s, 4);
  EXPECT_FALSE(c.healthy());
  EXPECT_EQ(c.gpus, 4u);
  EXPECT_EQ(c.reason(),
            "gpuscope: GPU 1 (GPU-1): 3 uncorrected ECC errors since the driver loaded");
  ASSERT_EQ(c.findings.size(), 3u);
  EXPECT_EQ(c.findings[1].severity, Severity::Warning);  // a pending remap: a reset clears it
  EXPECT_EQ(c.findings[2].text, "ECC is off");
  HealthRule strict;
  strict.row_remap_pending = true;
  strict.uncorrected_ecc = false;
  c = check_gpus(strict, s, 4);
  EXPECT_EQ(c.reason(), "gpuscope: GPU 2 (GPU-2): a row remap waits for the GPU's reset");
}

TEST(NodeCheck, AMissingOrLostGpu) {
  SystemDescription s;
  for (unsigned i = 0; i < 3; ++i) s.devices.push_back(gpu(i));
  s.devices[2].health.reset();
  s.devices[2].error = "nvmlDeviceGetHandleByIndex_v2: GPU is lost (NVML error 15)\n";
  const NodeCheck c = check_gpus(HealthRule{}, s, 4);
  EXPECT_EQ(c.reason(), "gpuscope: 3 of the 4 GPUs expected were found");
  ASSERT_EQ(c.findings.size(), 2u);
  EXPECT_EQ(c.findings[1].text,
            "cannot be opened: nvmlDeviceGetHandleByIndex_v2: GPU is lost (NVML error 15)");
}

TEST(NodeCheck, AmdGpusAreCheckedBesideNvidiaOnes) {
  SystemDescription s;
  s.devices.push_back(gpu(0));
  s.amd = AmdSystemDescription{};
  for (unsigned i = 1; i < 3; ++i) {
    DeviceDescription d = gpu(i);
    d.vendor = Vendor::Amd;
    s.amd->devices.push_back(d);
  }
  s.amd->devices[1].health->set(HealthMetric::EccUncorrectedVolatile, 1);
  const NodeCheck c = check_gpus(HealthRule{}, s, 3);
  EXPECT_EQ(c.gpus, 3u);
  EXPECT_EQ(c.reason(), "gpuscope: GPU 2 (GPU-2): 1 uncorrected ECC error since the driver loaded");
}

TEST(DcgmDiag, Dcgm3AFailureAndAWarning) {
  const DiagRead r = read_dcgm_diag(fixture("dcgm3-r1-fail.json"));
  EXPECT_EQ(r.version, "3.3.9");
  EXPECT_EQ(r.results, 5u);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].severity, Severity::Warning);
  EXPECT_EQ(r.findings[0].gpu, "GPUs 0,1,2,3");
  EXPECT_EQ(r.findings[1].severity, Severity::Failure);
  EXPECT_EQ(r.findings[1].gpu, "GPU 2");
  EXPECT_EQ(r.findings[1].text,
            "DCGM diagnostic Inforom failed: A row remap failed for GPU 2; the GPU needs to be "
            "replaced.");
}

TEST(DcgmDiag, Dcgm4EntitiesAndWarningObjects) {
  const DiagRead r = read_dcgm_diag(fixture("dcgm4-r1-pass.json"));
  EXPECT_EQ(r.version, "4.2.3");
  EXPECT_EQ(r.results, 4u);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].severity, Severity::Warning);
  EXPECT_EQ(r.findings[0].gpu, "GPU 2");
  EXPECT_EQ(r.findings[0].text,
            "DCGM diagnostic software warned: GPU 2 has a pending page retirement");
}

TEST(DcgmDiag, NoDiagnosticIsNoVerdict) {
  EXPECT_THROW(read_dcgm_diag(fixture("dcgm4-runtime-error.json")), Error);
  EXPECT_THROW(read_dcgm_diag("Error: Unable to run diagnostic on unsupported GPU 0."), Error);
  EXPECT_THROW(read_dcgm_diag(R"({"DCGM Diagnostic": {"test_categories": []}})"), Error);
  EXPECT_THROW(read_dcgm_diag(R"({"something": "else"})"), Error);
  try {
    read_dcgm_diag(fixture("dcgm4-runtime-error.json"));
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unable to establish a connection"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gpuscope::guard
