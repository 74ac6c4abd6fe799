// A simulated driver on a manual clock, installed behind the exported NVML functions.
#pragma once

#include <string>
#include <vector>

#include "sim/api.hpp"
#include "sim/driver.hpp"
#include "test_support.hpp"

namespace gpuscope::sim::testing {

class DriverHarness {
 public:
  DriverHarness() { set_process_driver_for_testing(&driver_); }
  ~DriverHarness() {
    set_process_driver_for_testing(nullptr);
    while (driver_.shutdown() == nvml::kSuccess) {
    }
  }
  DriverHarness(const DriverHarness&) = delete;
  DriverHarness& operator=(const DriverHarness&) = delete;

  // Options for scenario at path, with the state file in this harness's temp dir and the
  // timeline starting at ManualClock::kStart.
  DriverOptions options(const std::string& path) const {
    DriverOptions options;
    options.scenario_path = path;
    options.state_path = dir_.file("state.json");
    options.epoch_ns = ManualClock::kStart;
    return options;
  }

  // Initialises on a shipped scenario; fails the test with the driver's reason if it cannot.
  void init(const std::string& path) {
    ASSERT_EQ(driver_.init(options(path)), nvml::kSuccess) << driver_.last_error();
  }

  nvmlDevice_t device(unsigned int index) {
    nvmlDevice_t handle = nullptr;
    EXPECT_EQ(DeviceGetHandleByIndex(index, &handle), nvml::kSuccess) << driver_.last_error();
    return handle;
  }

  ManualClock& clock() { return clock_; }
  Driver& driver() { return driver_; }
  const TempDir& dir() const { return dir_; }

 private:
  TempDir dir_;
  ManualClock clock_;
  Driver driver_{clock_};
};

}  // namespace gpuscope::sim::testing
