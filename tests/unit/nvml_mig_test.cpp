// MIG calls through the real loader against the simulated driver: the unprivileged
// route to a GPU's MIG devices, what each says of itself, its own GPM, memory and processes, and
// the calls NVML refuses in MIG mode.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "nvml/gpm.hpp"
#include "nvml/session.hpp"
#include "sim_env.hpp"

namespace gpuscope::nvml {
namespace {

using testing::SimEnvironment;

std::shared_ptr<const Library> sim() {
  return Library::open({GPUSCOPE_TEST_SIM_LIBRARY, true});
}

// What the scenario files say of each instance (the inputs), and the profile facts of
// nvidia-smi mig -lgip on the real GPUs.
struct Want {
  const char* uuid;
  const char* profile;
  unsigned gi_id;
  unsigned slices;
  unsigned sms;
  std::uint64_t memory_mib;
  double util, sm_active, tensor, dram;  // the instance's levels, percent
  double used_gib;
  std::vector<unsigned> pids;
};

const std::vector<Want> kH100 = {
    {"MIG-b1000000-0000-5000-8000-000000000041",
     "4g.40gb",
     1,
     4,
     64,
     40448,
     95,
     85,
     65,
     55,
     34,
     {51101}},
    {"MIG-b1000000-0000-5000-8000-000000000022",
     "2g.20gb",
     3,
     2,
     32,
     20096,
     50,
     35,
     20,
     25,
     15,
     {51202, 51203}},
    {"MIG-b1000000-0000-5000-8000-000000000013",
     "1g.10gb",
     7,
     1,
     16,
     9984,
     25,
     15,
     0,
     6,
     3,
     {51307}},
};

const std::vector<Want> kA100 = {
    {"MIG-a1000000-0000-5000-8000-000000000031",
     "3g.40gb",
     1,
     3,
     42,
     40192,
     92,
     80,
     55,
     45,
     30,
     {43101}},
    {"MIG-a1000000-0000-5000-8000-000000000022",
     "2g.20gb",
     3,
     2,
     28,
     19968,
     60,
     40,
     25,
     30,
     12,
     {43202}},
    {"MIG-a1000000-0000-5000-8000-000000000017",
     "1g.10gb",
     7,
     1,
     14,
     9728,
     20,
     12,
     0,
     5,
     4,
     {43307}},
    {"MIG-a1000000-0000-5000-8000-000000000018", "1g.10gb", 8, 1, 14, 9728, 0, 0, 0, 0, 1, {43408}},
};

// Sets an environment variable for one test and unsets it afterwards, even if the test fails.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

bool fails_with(const auto& result, nvmlReturn_t code) {
  return !result.has_value() && result.error().code == code;
}

void expect_instances(const std::string& scenario, const std::vector<Want>& expected) {
  SimEnvironment env(SimEnvironment::fixture(scenario));
  Session session(sim());
  Device gpu = session.device(0);
  const std::string gpu_name = *gpu.name();
  auto mode = gpu.mig_mode();
  ASSERT_TRUE(mode.has_value()) << session.library()->describe(mode.error());
  EXPECT_TRUE(mode->current);
  EXPECT_TRUE(mode->pending);
  EXPECT_EQ(*gpu.max_mig_device_count(), 7U);
  auto devices = gpu.mig_devices();
  ASSERT_TRUE(devices.has_value()) << session.library()->describe(devices.error());
  ASSERT_EQ(devices->size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const Device& mig = (*devices)[i];
    const Want& want = expected[i];
    SCOPED_TRACE(want.profile);
    EXPECT_EQ(*mig.uuid(), want.uuid);
    EXPECT_EQ(*mig.name(), gpu_name + " MIG " + want.profile);
    EXPECT_EQ(*mig.gpu_instance_id(), want.gi_id);
    EXPECT_EQ(*mig.compute_instance_id(), 0U);
    auto attributes = mig.attributes();
    ASSERT_TRUE(attributes.has_value());
    EXPECT_EQ(attributes->gpu_instance_slice_count, want.slices);
    EXPECT_EQ(attributes->compute_instance_slice_count, want.slices);
    EXPECT_EQ(attributes->multiprocessor_count, want.sms);
    EXPECT_EQ(attributes->memory_mib, want.memory_mib);
    EXPECT_EQ(attributes->encoder_count, 0U);
    // The handle by UUID is the one by index; it leads back to the GPU.
    auto by_uuid = session.parent_of_mig(want.uuid);
    ASSERT_TRUE(by_uuid.has_value());
    EXPECT_EQ(by_uuid->handle(), gpu.handle());
  }
}

TEST(NvmlMig, StructLayoutsMatchNvmlH) {
  EXPECT_EQ(sizeof(nvmlDeviceAttributes_t), 40U);
  EXPECT_EQ(offsetof(nvmlDeviceAttributes_t, sharedOfaCount), 20U);
  EXPECT_EQ(offsetof(nvmlDeviceAttributes_t, gpuInstanceSliceCount), 24U);
  EXPECT_EQ(offsetof(nvmlDeviceAttributes_t, computeInstanceSliceCount), 28U);
  EXPECT_EQ(offsetof(nvmlDeviceAttributes_t, memorySizeMB), 32U);
  EXPECT_EQ(sizeof(nvmlProcessInfo_t), 24U);
  EXPECT_EQ(offsetof(nvmlProcessInfo_t, gpuInstanceId), 16U);
  EXPECT_EQ(offsetof(nvmlProcessInfo_t, computeInstanceId), 20U);
}

TEST(NvmlMig, DiscoversTheH100Instances) {
  expect_instances("h100-mig-mixed", kH100);
}

TEST(NvmlMig, DiscoversTheA100Instances) {
  expect_instances("a100-mig-mixed", kA100);
}

// The GPM metrics of one instance between two samples taken by `take`.
std::map<unsigned, std::optional<double>> gpm_between(const Library& library,
                                                      const std::shared_ptr<const Library>& shared,
                                                      const auto& take) {
  const std::vector<unsigned> ids = {kGpmGraphicsUtil, kGpmSmUtil, kGpmAnyTensorUtil,
                                     kGpmDramBwUtil, kGpmPcieTxPerSec};
  auto first = GpmSample::allocate(shared);
  auto second = GpmSample::allocate(shared);
  EXPECT_TRUE(first.has_value() && second.has_value());
  EXPECT_TRUE(take(*first).has_value()) << library.describe(take(*first).error());
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_TRUE(take(*second).has_value());
  GpmQuery query(shared, ids);
  std::vector<std::optional<double>> values(ids.size());
  EXPECT_TRUE(query.compute(*first, *second, values).has_value());
  std::map<unsigned, std::optional<double>> out;
  for (std::size_t i = 0; i < ids.size(); ++i) out[ids[i]] = values[i];
  return out;
}

TEST(NvmlMig, GpmPerInstanceRecoversEachInstancesLevelsWithinOnePoint) {
  SimEnvironment env(SimEnvironment::fixture("h100-mig-mixed"));
  Session session(sim());
  Device gpu = session.device(0);
  auto devices = gpu.mig_devices();
  ASSERT_TRUE(devices.has_value());
  ASSERT_EQ(devices->size(), kH100.size());
  const Library& library = *session.library();
  for (std::size_t i = 0; i < kH100.size(); ++i) {
    const Want& want = kH100[i];
    SCOPED_TRACE(want.profile);
    const unsigned gi = *(*devices)[i].gpu_instance_id();
    auto by_gi = gpm_between(library, session.library(),
                             [&](GpmSample& sample) { return sample.take_mig(gpu, gi); });
    // nvmlGpmSampleGet on the MIG device's handle: its compute instance, which spans the GI.
    auto by_handle = gpm_between(library, session.library(),
                                 [&](GpmSample& sample) { return sample.take((*devices)[i]); });
    for (const auto& metrics : {by_gi, by_handle}) {
      ASSERT_TRUE(metrics.at(kGpmSmUtil).has_value());
      EXPECT_NEAR(*metrics.at(kGpmGraphicsUtil), want.util, 1.0);
      EXPECT_NEAR(*metrics.at(kGpmSmUtil), want.sm_active, 1.0);
      EXPECT_NEAR(*metrics.at(kGpmAnyTensorUtil), want.tensor, 1.0);
      EXPECT_NEAR(*metrics.at(kGpmDramBwUtil), want.dram, 1.0);
      // PCIe belongs to the whole GPU.
      EXPECT_FALSE(metrics.at(kGpmPcieTxPerSec).has_value());
    }
  }
  auto sample = GpmSample::allocate(session.library());
  EXPECT_TRUE(fails_with(sample->take_mig(gpu, 12), kErrorNotFound));
}

TEST(NvmlMig, MemoryAndProcessesArePerInstance) {
  SimEnvironment env(SimEnvironment::fixture("h100-mig-mixed"));
  Session session(sim());
  Device gpu = session.device(0);
  auto devices = *gpu.mig_devices();
  ASSERT_EQ(devices.size(), kH100.size());
  std::uint64_t used_sum = 0;
  std::size_t process_count = 0;
  for (std::size_t i = 0; i < kH100.size(); ++i) {
    const Want& want = kH100[i];
    SCOPED_TRACE(want.profile);
    auto memory = devices[i].memory();
    ASSERT_TRUE(memory.has_value());
    EXPECT_EQ(memory->total_bytes, want.memory_mib << 20U);
    EXPECT_NEAR(static_cast<double>(memory->used_bytes) / (1ULL << 30U), want.used_gib, 0.01);
    used_sum += memory->used_bytes;
    auto processes = devices[i].compute_processes();
    ASSERT_TRUE(processes.has_value());
    ASSERT_EQ(processes->size(), want.pids.size());
    for (std::size_t p = 0; p < want.pids.size(); ++p) {
      EXPECT_EQ((*processes)[p].pid, want.pids[p]);
      EXPECT_EQ((*processes)[p].gpu_instance_id, want.gi_id);
      EXPECT_EQ((*processes)[p].compute_instance_id, 0U);
    }
    process_count += want.pids.size();
  }
  // Root sees the whole GPU: every instance's memory and processes, with their instance ids.
  auto whole = gpu.memory();
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(whole->used_bytes, used_sum);
  auto all = gpu.compute_processes();
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), process_count);
  for (const ProcessInfo& process : *all) EXPECT_TRUE(process.gpu_instance_id.has_value());
}

TEST(NvmlMig, AProcessNamedLaterRunsInTheInstanceItsLineNames) {
  SimEnvironment env(SimEnvironment::fixture("h100-mig-mixed"));
  const std::string list = env.dir() + "/processes.txt";
  std::ofstream(list) << "0 61001 512 3\n0 61002 256\n0 61003 128 12\n";
  ScopedEnv file("GPUSCOPE_SIM_PROCESSES_FILE", list);
  Session session(sim());
  auto devices = *session.device(0).mig_devices();
  ASSERT_EQ(devices.size(), kH100.size());
  // GPU instance 3 is the 2g.20gb: its two processes, then the one the file adds.
  auto processes = devices[1].compute_processes();
  ASSERT_TRUE(processes.has_value());
  ASSERT_EQ(processes->size(), 3U);
  EXPECT_EQ(processes->back().pid, 61001U);
  EXPECT_EQ(processes->back().used_memory_bytes, 512ULL << 20U);
  EXPECT_EQ(processes->back().gpu_instance_id, 3U);
  // A line without an instance, or with one the GPU lacks, is in no instance.
  for (std::size_t i : {0U, 2U}) EXPECT_EQ(devices[i].compute_processes()->size(), 1U);
}

TEST(NvmlMig, WithoutPrivilegesTheGpuAggregateIsRefusedButInstancesAnswer) {
  SimEnvironment env(SimEnvironment::fixture("h100-mig-mixed"));
  ScopedEnv unprivileged("GPUSCOPE_SIM_PRIVILEGED", "0");
  Session session(sim());
  Device gpu = session.device(0);
  EXPECT_TRUE(fails_with(gpu.memory(), kErrorNoPermission));
  EXPECT_TRUE(fails_with(gpu.compute_processes(), kErrorNoPermission));
  auto devices = gpu.mig_devices();
  ASSERT_TRUE(devices.has_value());
  ASSERT_FALSE(devices->empty());
  EXPECT_TRUE(devices->front().memory().has_value());
  EXPECT_TRUE(devices->front().compute_processes().has_value());
}

TEST(NvmlMig, CallsNvmlRefusesInMigModeAreNotSupported) {
  SimEnvironment env(SimEnvironment::fixture("a100-mig-mixed"));
  Session session(sim());
  Device gpu = session.device(0);
  EXPECT_TRUE(fails_with(gpu.utilization(), kErrorNotSupported));
  EXPECT_TRUE(fails_with(gpu.encoder_utilization(), kErrorNotSupported));
  EXPECT_TRUE(fails_with(gpu.decoder_utilization(), kErrorNotSupported));
  EXPECT_TRUE(fails_with(gpu.process_utilization(0), kErrorNotSupported));
  EXPECT_TRUE(fails_with(gpu.remapped_rows(), kErrorNotSupported));
  // Only a MIG device's handle has instance ids and attributes.
  EXPECT_TRUE(fails_with(gpu.attributes(), kErrorNotSupported));
  EXPECT_TRUE(fails_with(gpu.gpu_instance_id(), kErrorInvalidArgument));
  // The GPU's shared signals are read on the GPU, not on its MIG devices.
  Device mig = gpu.mig_devices()->front();
  EXPECT_TRUE(gpu.power_usage_mw().has_value());
  EXPECT_TRUE(fails_with(mig.power_usage_mw(), kErrorNotSupported));
  EXPECT_TRUE(fails_with(mig.utilization(), kErrorNotSupported));
  EXPECT_TRUE(fails_with(mig.mig_mode(), kErrorNotSupported));
  // GPM came with Hopper: an A100's instances are read through DCGM instead.
  auto sample = GpmSample::allocate(session.library());
  EXPECT_TRUE(fails_with(sample->take_mig(gpu, *mig.gpu_instance_id()), kErrorNotSupported));
}

TEST(NvmlMig, GpusOutOfMigModeSayOff) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  Session session(sim());
  Device gpu = session.device(0);
  auto mode = gpu.mig_mode();
  ASSERT_TRUE(mode.has_value());
  EXPECT_FALSE(mode->current);
  EXPECT_EQ(*gpu.max_mig_device_count(), 0U);
  // What a real H200 with MIG off answered (docs/validation.md).
  auto none = gpu.mig_device(0);  // NOT_FOUND: no MIG device there
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
  EXPECT_TRUE(gpu.mig_devices()->empty());
  EXPECT_TRUE(fails_with(gpu.gpu_instance_id(), kErrorInvalidArgument));
  EXPECT_TRUE(fails_with(gpu.attributes(), kErrorNotSupported));
  auto sample = GpmSample::allocate(session.library());
  EXPECT_TRUE(fails_with(sample->take_mig(gpu, 0), kErrorInvalidArgument));
  EXPECT_TRUE(gpu.utilization().has_value());
}

TEST(NvmlMig, MigDeviceUuidsAloneAreHandlesWithoutInstances) {
  SimEnvironment env(SimEnvironment::fixture("h100x2-mig"));
  Session session(sim());
  Device gpu = session.device(1);
  EXPECT_TRUE(gpu.mig_mode()->current);
  auto devices = gpu.mig_devices();
  ASSERT_TRUE(devices.has_value());
  ASSERT_EQ(devices->size(), 3U);
  auto parent = session.parent_of_mig("MIG-c09f7a3e-6d25-5b81-9f4c-0a8e3d7b2c56");
  ASSERT_TRUE(parent.has_value());
  EXPECT_EQ(parent->handle(), gpu.handle());
  EXPECT_TRUE(fails_with(devices->front().gpu_instance_id(), kErrorNotSupported));
  EXPECT_TRUE(fails_with(devices->front().attributes(), kErrorNotSupported));
  auto sample = GpmSample::allocate(session.library());
  EXPECT_TRUE(fails_with(sample->take_mig(gpu, 1), kErrorNotFound));
}

TEST(NvmlMig, MigEnabledWithNoInstancesHasNoMigDevices) {
  SimEnvironment env(SimEnvironment::fixture("h100-mig-empty"));
  Session session(sim());
  Device gpu = session.device(0);
  EXPECT_TRUE(gpu.mig_mode()->current);
  EXPECT_EQ(*gpu.max_mig_device_count(), 7U);
  for (unsigned index = 0; index < 7; ++index) {
    auto device = gpu.mig_device(index);
    ASSERT_TRUE(device.has_value());
    EXPECT_FALSE(device->has_value());
  }
  EXPECT_TRUE(fails_with(gpu.mig_device(7), kErrorInvalidArgument));
  EXPECT_TRUE(gpu.mig_devices()->empty());
  auto sample = GpmSample::allocate(session.library());
  EXPECT_TRUE(fails_with(sample->take_mig(gpu, 1), kErrorNotFound));
}

// Scenario time zero now, not at this process's first nvmlInit.
ScopedEnv epoch_now() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return ScopedEnv(
      "GPUSCOPE_SIM_EPOCH_NS",
      std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()));
}

TEST(NvmlMig, InstancesComeAndGoAtTheirScenarioTimes) {
  SimEnvironment env(SimEnvironment::fixture("h100-mig-churn"));
  ScopedEnv scale("GPUSCOPE_SIM_TIME_SCALE", "20");  // the 6 s change comes after 300 ms
  ScopedEnv epoch = epoch_now();
  Session session(sim());
  Device gpu = session.device(0);
  auto before = gpu.mig_devices();
  ASSERT_TRUE(before.has_value());
  ASSERT_EQ(before->size(), 2U);
  const Device doomed = before->front();
  EXPECT_EQ(*doomed.gpu_instance_id(), 1U);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  auto after = gpu.mig_devices();
  ASSERT_TRUE(after.has_value());
  ASSERT_EQ(after->size(), 2U);
  EXPECT_EQ(*(*after)[0].uuid(), "MIG-c1000000-0000-5000-8000-000000000013");
  EXPECT_EQ(*(*after)[1].uuid(), "MIG-c1000000-0000-5000-8000-000000000022");
  EXPECT_EQ(*(*after)[1].gpu_instance_id(), 3U);
  // The old handle names nothing now; its UUID is gone.
  EXPECT_TRUE(fails_with(doomed.gpu_instance_id(), kErrorInvalidArgument));
  EXPECT_TRUE(fails_with(doomed.memory(), kErrorInvalidArgument));
  EXPECT_TRUE(fails_with(session.parent_of_mig("MIG-c1000000-0000-5000-8000-000000000031"),
                         kErrorNotFound));
  auto sample = GpmSample::allocate(session.library());
  EXPECT_TRUE(fails_with(sample->take_mig(gpu, 1), kErrorNotFound));
}

TEST(NvmlMig, MigModeTurnedOffEndsEveryInstance) {
  SimEnvironment env(SimEnvironment::fixture("h100-mig-off"));
  ScopedEnv scale("GPUSCOPE_SIM_TIME_SCALE", "20");  // MIG goes off after 300 ms
  ScopedEnv epoch = epoch_now();
  Session session(sim());
  Device gpu = session.device(0);
  ASSERT_TRUE(gpu.mig_mode().has_value());
  EXPECT_TRUE(gpu.mig_mode()->current);
  auto before = gpu.mig_devices();
  ASSERT_TRUE(before.has_value());
  ASSERT_EQ(before->size(), 2U);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  ASSERT_TRUE(gpu.mig_mode().has_value());
  EXPECT_FALSE(gpu.mig_mode()->current);
  EXPECT_FALSE(gpu.mig_mode()->pending);
  auto after = gpu.mig_devices();
  EXPECT_TRUE(!after.has_value() || after->empty());
  EXPECT_TRUE(fails_with(before->front().gpu_instance_id(), kErrorInvalidArgument));
  auto sample = GpmSample::allocate(session.library());
  EXPECT_TRUE(fails_with(sample->take_mig(gpu, 1), kErrorInvalidArgument));
}

// A scenario that the simulator must refuse, with `message` in the reason.
void expect_refused(const std::string& gpu_json, const std::string& message) {
  testing::TempDir dir;
  const std::string path = dir.file("bad-mig.json");
  std::ofstream(path) << R"({"name": "bad-mig", "phases": [{"name": "idle", "duration_s": 1}],)"
                      << R"( "gpus": [)" << gpu_json << "]}";
  SimEnvironment env(path);
  try {
    Session session(sim());
    ADD_FAILURE() << "accepted: " << gpu_json;
  } catch (const std::exception& error) {
    EXPECT_NE(std::string(error.what()).find(message), std::string::npos) << error.what();
  }
}

TEST(NvmlMig, ScenariosWithImpossiblePartitionsAreRefused) {
  expect_refused(R"({"model": "H100-SXM5-80GB", "mig": {"instances": [{"profile": "1g.5gb"}]}})",
                 "no MIG profile \"1g.5gb\" on H100-SXM5-80GB");
  expect_refused(R"({"model": "A100-SXM4-80GB", "mig": {"instances": [{"profile": "4g.40gb"},)"
                 R"( {"profile": "3g.40gb"}, {"profile": "1g.10gb"}]}})",
                 "the instances need 8 compute and 9 memory slices");
  expect_refused(R"({"model": "V100-SXM2-32GB", "mig": {"instances": []}})",
                 "V100-SXM2-32GB has no MIG profiles");
  expect_refused(R"({"model": "H100-SXM5-80GB", "mig": {"instances": [{"profile": "1g.10gb",)"
                 R"( "phases": [{"name": "big", "duration_s": 1, "memory_used_gib": 12}]}]}})",
                 "does not fit in 1g.10gb");
  expect_refused(R"({"model": "H100-SXM5-80GB", "mig": {"instances": [{"profile": "2g.20gb",)"
                 R"( "gpu_instance_id": 3}, {"profile": "2g.20gb", "gpu_instance_id": 3}]}})",
                 "GPU instance id 3 is taken");
  expect_refused(
      R"({"model": "H100-SXM5-80GB", "mig": {"instances": [{"profile": "1g.10gb",)"
      R"( "processes": [{"pid": 9}]}, {"profile": "1g.10gb", "processes": [{"pid": 9}]}]}})",
      "pid 9 already runs in another instance");
  expect_refused(R"({"model": "H100-SXM5-80GB", "processes": [{"pid": 7}],)"
                 R"( "mig": {"instances": []}})",
                 "runs processes in its instances");
  expect_refused(R"({"model": "H100-SXM5-80GB", "mig": {"off_at_s": 2, "instances":)"
                 R"( [{"profile": "1g.10gb", "created_at_s": 3}]}})",
                 "the instance is created after MIG mode turns off");
}

}  // namespace
}  // namespace gpuscope::nvml
