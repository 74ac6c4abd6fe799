// libgpuscope.so.0 through gpuscope.h alone, on the simulated GPUs through the real loader
// (GPUSCOPE_NVML_LIBRARY names the simulated NVML, as a site's variable would name the real one).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "gpuscope.h"
#include "support/temp_dir.hpp"

namespace {

using namespace std::chrono_literals;

class CApi : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("GPUSCOPE_NVML_LIBRARY", GPUSCOPE_TEST_SIM_LIBRARY, 1);
    setenv("GPUSCOPE_SIM_SCENARIO",
           (std::string(GPUSCOPE_TEST_SCENARIO_DIR) + "/h100x4-straggler.json").c_str(), 1);
    setenv("GPUSCOPE_SIM_STATE", dir_.file("state.json").c_str(), 1);
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("GPUSCOPE_MARK_SOCKET");
  }
  void TearDown() override {
    for (const char* name : {"GPUSCOPE_NVML_LIBRARY", "GPUSCOPE_SIM_SCENARIO", "GPUSCOPE_SIM_STATE",
                             "CUDA_VISIBLE_DEVICES"}) {
      unsetenv(name);
    }
  }
  gpuscope_monitor* open(double sampling_ms = 50) {
    gpuscope_options options;
    gpuscope_options_init(&options);
    options.sampling_ms = sampling_ms;
    gpuscope_monitor* monitor = nullptr;
    EXPECT_EQ(gpuscope_monitor_open(&options, &monitor), GPUSCOPE_OK) << gpuscope_last_error();
    return monitor;
  }
  gpuscope::testing::TempDir dir_;
};

// The index of the one GPU a window of `monitor` measured (a failure if it measured another
// number of GPUs).
unsigned only_gpu_of_a_window(gpuscope_monitor* monitor) {
  uint64_t id = 0;
  EXPECT_EQ(gpuscope_window_begin(monitor, "w", &id), GPUSCOPE_OK);
  gpuscope_window window;
  gpuscope_window_init(&window);
  gpuscope_gpu_window gpu;
  gpuscope_gpu_window_init(&gpu, 1);
  EXPECT_EQ(gpuscope_window_end(monitor, id, &window, &gpu, 1), GPUSCOPE_OK);
  EXPECT_EQ(window.gpu_count, 1U);
  return gpu.index;
}

TEST_F(CApi, AWindowMeasuresEveryVisibleGpuFromItsCounter) {
  gpuscope_monitor* monitor = open();
  ASSERT_NE(monitor, nullptr);
  unsigned count = 0;
  ASSERT_EQ(gpuscope_monitor_gpu_count(monitor, &count), GPUSCOPE_OK);
  EXPECT_EQ(count, 4U);
  uint64_t id = 0;
  ASSERT_EQ(gpuscope_window_begin(monitor, "train", &id), GPUSCOPE_OK);
  std::this_thread::sleep_for(600ms);
  gpuscope_window window;
  gpuscope_window_init(&window);
  gpuscope_gpu_window gpus[4];
  gpuscope_gpu_window_init(gpus, 4);
  ASSERT_EQ(gpuscope_window_end(monitor, id, &window, gpus, 4), GPUSCOPE_OK);
  EXPECT_EQ(std::string(gpuscope_last_error()), "");
  EXPECT_EQ(window.id, id);
  EXPECT_EQ(window.gpu_count, 4U);
  EXPECT_NEAR(window.seconds, 0.6, 0.2);
  for (unsigned k = 0; k < 4; ++k) {
    EXPECT_EQ(gpus[k].index, k);
    EXPECT_EQ(std::string(gpus[k].uuid).rfind("GPU-", 0), 0U) << gpus[k].uuid;
    EXPECT_EQ(gpus[k].energy_source, GPUSCOPE_ENERGY_COUNTER);
    // An H100 draws at least its idle power: tens of watts, not zero, not kilowatts.
    EXPECT_GT(gpus[k].mean_power_w, 30);
    EXPECT_LT(gpus[k].mean_power_w, 800);
    EXPECT_NEAR(gpus[k].energy_j, gpus[k].mean_power_w * window.seconds, 1e-6);
    EXPECT_GE(gpus[k].samples, 8U);
    EXPECT_FALSE(std::isnan(gpus[k].gpu_util_pct));
    EXPECT_EQ(gpus[k].lost, 0);
  }
  EXPECT_NEAR(window.energy_j,
              gpus[0].energy_j + gpus[1].energy_j + gpus[2].energy_j + gpus[3].energy_j, 1e-9);
  EXPECT_EQ(gpuscope_monitor_close(monitor), GPUSCOPE_OK);
}

TEST_F(CApi, CudaVisibleDevicesChoosesTheGpus) {
  setenv("CUDA_VISIBLE_DEVICES", "1", 1);
  gpuscope_monitor* monitor = open();
  ASSERT_NE(monitor, nullptr);
  EXPECT_EQ(only_gpu_of_a_window(monitor), 1U);
  gpuscope_monitor_close(monitor);
}

TEST_F(CApi, EachRankOfTorchrunMeasuresTheGpuOfItsLocalRank) {
  // Four ranks on a node of four GPUs: rank 2 measures GPU 2 alone, so that the ranks' windows
  // add up to the node once, not four times.
  const std::pair<const char*, const char*> torchrun[] = {{"RANK", "2"},
                                                          {"WORLD_SIZE", "4"},
                                                          {"LOCAL_RANK", "2"},
                                                          {"LOCAL_WORLD_SIZE", "4"},
                                                          {"TORCHELASTIC_RUN_ID", "r"}};
  for (const auto& [name, value] : torchrun) setenv(name, value, 1);
  gpuscope_monitor* monitor = open();
  for (const auto& [name, value] : torchrun) unsetenv(name);
  ASSERT_NE(monitor, nullptr);
  EXPECT_EQ(only_gpu_of_a_window(monitor), 2U);
  gpuscope_monitor_close(monitor);
}

TEST_F(CApi, NoVisibleGpuIsAClearError) {
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  gpuscope_monitor* monitor = reinterpret_cast<gpuscope_monitor*>(0x1);
  EXPECT_EQ(gpuscope_monitor_open(nullptr, &monitor), GPUSCOPE_ERROR_NO_GPU);
  EXPECT_EQ(monitor, nullptr);
  EXPECT_NE(std::string(gpuscope_last_error()).find("no GPU this process may use"),
            std::string::npos)
      << gpuscope_last_error();
  EXPECT_NE(std::string(gpuscope_last_error()).find("CUDA_VISIBLE_DEVICES"), std::string::npos)
      << gpuscope_last_error();
}

TEST_F(CApi, NoDriverIsAClearError) {
  setenv("GPUSCOPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  gpuscope_monitor* monitor = nullptr;
  EXPECT_EQ(gpuscope_monitor_open(nullptr, &monitor), GPUSCOPE_ERROR_NO_GPU);
  EXPECT_NE(std::string(gpuscope_last_error()).find("/nonexistent/libnvidia-ml.so.1"),
            std::string::npos)
      << gpuscope_last_error();
}

TEST_F(CApi, BadArgumentsAreRefusedWithTheirReason) {
  gpuscope_options options;
  gpuscope_options_init(&options);
  options.sampling_ms = 5;
  gpuscope_monitor* monitor = nullptr;
  EXPECT_EQ(gpuscope_monitor_open(&options, &monitor), GPUSCOPE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpuscope_last_error()).find("sampling_ms 5"), std::string::npos);
  options.sampling_ms = 100;
  options.gpus = "7";  // the scenario has four
  EXPECT_EQ(gpuscope_monitor_open(&options, &monitor), GPUSCOPE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpuscope_last_error()).find("7"), std::string::npos);
  gpuscope_options unset{};  // struct_size 0: not initialised
  EXPECT_EQ(gpuscope_monitor_open(&unset, &monitor), GPUSCOPE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpuscope_last_error()).find("gpuscope_options_init"), std::string::npos);
  EXPECT_EQ(gpuscope_monitor_open(nullptr, nullptr), GPUSCOPE_ERROR_INVALID_ARGUMENT);
  uint64_t id = 0;
  EXPECT_EQ(gpuscope_window_begin(nullptr, "w", &id), GPUSCOPE_ERROR_INVALID_ARGUMENT);
}

TEST_F(CApi, AWindowEndedTwiceOrNeverBegunIsAnError) {
  gpuscope_monitor* monitor = open();
  ASSERT_NE(monitor, nullptr);
  uint64_t id = 0;
  ASSERT_EQ(gpuscope_window_begin(monitor, "w", &id), GPUSCOPE_OK);
  EXPECT_EQ(gpuscope_window_end(monitor, id, nullptr, nullptr, 0), GPUSCOPE_OK);
  EXPECT_EQ(gpuscope_window_end(monitor, id, nullptr, nullptr, 0), GPUSCOPE_ERROR_WINDOW_ENDED);
  EXPECT_NE(std::string(gpuscope_last_error()).find("ended already"), std::string::npos);
  EXPECT_EQ(gpuscope_window_end(monitor, 12345, nullptr, nullptr, 0),
            GPUSCOPE_ERROR_UNKNOWN_WINDOW);
  // One never ended: closing says it is lost, and frees the monitor all the same.
  ASSERT_EQ(gpuscope_window_begin(monitor, "never", &id), GPUSCOPE_OK);
  unsigned open_count = 0;
  ASSERT_EQ(gpuscope_monitor_open_windows(monitor, &open_count), GPUSCOPE_OK);
  EXPECT_EQ(open_count, 1U);
  EXPECT_EQ(gpuscope_monitor_close(monitor), GPUSCOPE_ERROR_WINDOWS_OPEN);
  EXPECT_NE(std::string(gpuscope_last_error()).find("1 window was never ended"), std::string::npos)
      << gpuscope_last_error();
}

TEST_F(CApi, WindowsFromManyThreadsAtOnce) {
  gpuscope_monitor* monitor = open();
  ASSERT_NE(monitor, nullptr);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int k = 0; k < 500; ++k) {
        uint64_t outer = 0, inner = 0;
        gpuscope_window w;
        gpuscope_window_init(&w);
        if (gpuscope_window_begin(monitor, "outer", &outer) != GPUSCOPE_OK) ++failures;
        if (gpuscope_window_begin(monitor, "inner", &inner) != GPUSCOPE_OK) ++failures;
        if (gpuscope_window_end(monitor, inner, &w, nullptr, 0) != GPUSCOPE_OK) ++failures;
        if (gpuscope_window_end(monitor, outer, &w, nullptr, 0) != GPUSCOPE_OK) ++failures;
        if (w.id != outer) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  unsigned open_count = 99;
  ASSERT_EQ(gpuscope_monitor_open_windows(monitor, &open_count), GPUSCOPE_OK);
  EXPECT_EQ(open_count, 0U);
  EXPECT_EQ(gpuscope_monitor_close(monitor), GPUSCOPE_OK);
}

TEST_F(CApi, AForkedChildIsToldToOpenItsOwnMonitor) {
  gpuscope_monitor* monitor = open();
  ASSERT_NE(monitor, nullptr);
  const pid_t child = fork();
  if (child == 0) {
    uint64_t id = 0;
    const bool refused =
        gpuscope_window_begin(monitor, "w", &id) == GPUSCOPE_ERROR_FORKED &&
        std::string(gpuscope_last_error()).find("open a monitor in this process") !=
            std::string::npos &&
        gpuscope_monitor_close(monitor) == GPUSCOPE_ERROR_FORKED;
    _exit(refused ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  uint64_t id = 0;  // the parent's monitor goes on
  EXPECT_EQ(gpuscope_window_begin(monitor, "w", &id), GPUSCOPE_OK);
  EXPECT_EQ(gpuscope_window_end(monitor, id, nullptr, nullptr, 0), GPUSCOPE_OK);
  EXPECT_EQ(gpuscope_monitor_close(monitor), GPUSCOPE_OK);
}

TEST_F(CApi, AGpuLostInsideAWindowHasNoFiguresAndTheOthersGoOn) {
  // GPU 1 of h100x2-gpu-lost falls off the bus 8 scenario seconds in: 0.4 s at 20 times speed.
  setenv("GPUSCOPE_SIM_SCENARIO",
         (std::string(GPUSCOPE_TEST_SCENARIO_DIR) + "/h100x2-gpu-lost.json").c_str(), 1);
  setenv("GPUSCOPE_SIM_TIME_SCALE", "20", 1);
  // The scenario from now (the simulated driver of this process has run for the tests before).
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  setenv("GPUSCOPE_SIM_EPOCH_NS",
         std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()).c_str(),
         1);
  gpuscope_monitor* monitor = open();
  unsetenv("GPUSCOPE_SIM_TIME_SCALE");
  unsetenv("GPUSCOPE_SIM_EPOCH_NS");
  ASSERT_NE(monitor, nullptr);
  uint64_t id = 0;
  ASSERT_EQ(gpuscope_window_begin(monitor, "w", &id), GPUSCOPE_OK);
  std::this_thread::sleep_for(900ms);
  gpuscope_window window;
  gpuscope_window_init(&window);
  gpuscope_gpu_window gpus[2];
  gpuscope_gpu_window_init(gpus, 2);
  ASSERT_EQ(gpuscope_window_end(monitor, id, &window, gpus, 2), GPUSCOPE_OK);
  EXPECT_EQ(gpus[0].lost, 0);
  EXPECT_GT(gpus[0].energy_j, 0);
  EXPECT_EQ(gpus[1].lost, 1);
  EXPECT_TRUE(std::isnan(gpus[1].energy_j));
  EXPECT_TRUE(std::isnan(window.energy_j));  // unknown, never a smaller sum
  EXPECT_EQ(gpuscope_monitor_close(monitor), GPUSCOPE_OK);
}

TEST_F(CApi, StatusesHaveWordsAndTheVersionIsCMakes) {
  EXPECT_STREQ(gpuscope_status_string(GPUSCOPE_ERROR_NO_GPU), "no GPU");
  EXPECT_STREQ(gpuscope_version(), GPUSCOPE_TEST_VERSION);
}

}  // namespace
