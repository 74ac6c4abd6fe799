// core/event_kinds.hpp: every stored word reads back as its kind; an unknown one keeps its word.
#include <gtest/gtest.h>

#include <sstream>

#include "core/event_kinds.hpp"

namespace gpuscope {
namespace {

TEST(EventKinds, StoredWordsRoundTrip) {
  for (auto value :
       {EventKind::JobStart, EventKind::JobExit, EventKind::JobStop, EventKind::JobContinue,
        EventKind::Signal, EventKind::MaxRuntime, EventKind::ClockEvents, EventKind::GpuLost,
        EventKind::Gap, EventKind::WriteError}) {
    const EventKind kind(value);
    ASSERT_FALSE(kind.text().empty());
    EXPECT_EQ(EventKind::parse(kind.text()).value(), value) << kind;
  }
  EXPECT_EQ(EventKind(EventKind::GpuLost).text(), "gpu_lost");
}

TEST(EventKinds, AWordFromANewerGpuscopeIsKeptAsItWasStored) {
  const EventKind kind = EventKind::parse("xid_error");
  EXPECT_EQ(kind.value(), EventKind::Other);
  EXPECT_EQ(kind.text(), "xid_error");
  std::ostringstream out;
  out << kind;
  EXPECT_EQ(out.str(), "xid_error");
  EXPECT_FALSE(kind == EventKind::GpuLost);
}

}  // namespace
}  // namespace gpuscope
