// What gpuscope refuses: the gpuscope::Error an action throws, and its message. Header-only, so
// any suite that links core/ can use it.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace gpuscope::testing {

// The Error `action` throws; a failed expectation, and an empty Error, when it throws none.
template <typename Action>
Error refusal(Action&& action) {
  try {
    std::forward<Action>(action)();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error("");
}

// The message of the Error `action` throws, "no error" when it throws none; another exception
// is said as "not a gpuscope::Error: <what>", so a test looking for its words fails.
template <typename Action>
std::string refusal_message(Action&& action) {
  try {
    std::forward<Action>(action)();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a gpuscope::Error: ") + e.what();
  }
  return "no error";
}

// The message of the usage error (exit code 2, a failed expectation otherwise) `action` throws,
// "" when it throws none: for checks of options, where accepting is an outcome too.
template <typename Action>
std::string usage_refusal(Action&& action) {
  try {
    std::forward<Action>(action)();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2) << e.what();
    return e.what();
  }
  return {};
}

}  // namespace gpuscope::testing
