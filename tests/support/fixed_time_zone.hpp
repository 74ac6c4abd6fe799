// The process's local time zone chosen by a test (TZ, then tzset), the one before restored when
// it ends: code that reads or prints local times (sacct's, days and ISO weeks) is checked in a
// zone the test knows, whatever the machine's. Set it before any thread starts.
#pragma once

#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

namespace gpuscope::testing {

class FixedTimeZone {
 public:
  // `zone` as TZ takes it: "UTC", "JST-9" (POSIX, no tzdata needed), ":Europe/Berlin".
  explicit FixedTimeZone(const char* zone) {
    if (const char* old = std::getenv("TZ")) saved_ = old;
    setenv("TZ", zone, 1);
    tzset();
  }
  ~FixedTimeZone() {
    if (saved_) {
      setenv("TZ", saved_->c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }
  FixedTimeZone(const FixedTimeZone&) = delete;
  FixedTimeZone& operator=(const FixedTimeZone&) = delete;

 private:
  std::optional<std::string> saved_;
};

}  // namespace gpuscope::testing
