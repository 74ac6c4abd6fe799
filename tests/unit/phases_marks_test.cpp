// phases/: the mark protocol, the socket (real lines through a real Unix stream socket), the
// tracker that pairs begins with ends, and the output patterns.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "core/error.hpp"
#include "phases/mark_protocol.hpp"
#include "phases/mark_socket.hpp"
#include "phases/output_phases.hpp"
#include "phases/phase_tracker.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::phases {
namespace {

using testing::TempDir;

TEST(MarkProtocol, RoundTrip) {
  Mark m;
  m.kind = MarkKind::Begin;
  m.mono_ns = 123456789012;
  m.pid = 4242;
  m.tid = 4243;
  m.instance = "17";
  m.name = "forward pass";
  const std::string line = format_mark(m);
  EXPECT_EQ(line, "GSM1\tbegin\t123456789012\t4242\t4243\t17\tforward pass");
  const auto back = parse_mark(line);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->kind, MarkKind::Begin);
  EXPECT_EQ(back->mono_ns, m.mono_ns);
  EXPECT_EQ(back->pid, 4242);
  EXPECT_EQ(back->tid, 4243);
  EXPECT_EQ(back->instance, "17");
  EXPECT_EQ(back->name, "forward pass");
}

TEST(MarkProtocol, NameIsTheRestTabsAndControlsBecomeSpaces) {
  const auto m = parse_mark(
      "GSM1\tpoint\t5\t1\t\t\tsave\tto\x01"
      "disk\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name, "save to disk");
  EXPECT_FALSE(m->tid);
  EXPECT_EQ(m->instance, "");
}

TEST(MarkProtocol, NotMarksSayWhy) {
  std::string why;
  EXPECT_FALSE(parse_mark("hello", &why));
  EXPECT_EQ(why, "not a gpuscope mark (no GSM1)");
  EXPECT_FALSE(parse_mark("GSM1\tbegin\t5\t1\t\tx", &why));
  EXPECT_EQ(why, "fewer than 7 fields");
  EXPECT_FALSE(parse_mark("GSM1\tstart\t5\t1\t\t\tx", &why));
  EXPECT_EQ(why, "the kind is not begin, end or point");
  EXPECT_FALSE(parse_mark("GSM1\tbegin\t-5\t1\t\t\tx", &why));
  EXPECT_EQ(why, "the time is not a number of nanoseconds");
  EXPECT_FALSE(parse_mark("GSM1\tbegin\t5\t0\t\t\tx", &why));
  EXPECT_EQ(why, "the pid is not a process id");
  EXPECT_FALSE(parse_mark("GSM1\tbegin\t5\t1\tt\t\tx", &why));
  EXPECT_EQ(why, "the thread id is not a number");
  EXPECT_FALSE(parse_mark("GSM1\tbegin\t5\t1\t\t\t \t ", &why));
  EXPECT_EQ(why, "the name is empty");
  EXPECT_FALSE(parse_mark(std::string(5000, 'x'), &why));
  EXPECT_EQ(why, "longer than 4096 bytes");
}

TEST(MarkProtocol, LongNamesAreCutAtACharacterBoundary) {
  std::string name;
  while (name.size() < kMaxNameBytes + 10) name += "é";  // two bytes each
  const std::string cut = clean_name("x" + name);        // odd offset: a cut inside a character
  EXPECT_LE(cut.size(), kMaxNameBytes);
  EXPECT_GE(cut.size(), kMaxNameBytes - 1);
  EXPECT_EQ(static_cast<unsigned char>(cut.back()) & 0xC0, 0x80);  // ends on a whole "é"
  EXPECT_EQ(cut.size() % 2, 1U);
}

TEST(MarkProtocol, ACutNameEndsWithoutASpace) {
  // The cut falls just after a space: the name ends before it, so the line format_mark writes
  // reads back as the same name (found by fuzz_marks).
  const std::string cut = clean_name(std::string(kMaxNameBytes - 1, 'a') + " bcd");
  EXPECT_EQ(cut, std::string(kMaxNameBytes - 1, 'a'));
  EXPECT_EQ(clean_name(cut), cut);
}

TEST(MarkSocket, MarksArriveInOrderAndNothingAfterStop) {
  TempDir dir;
  std::mutex mutex;
  std::vector<Mark> got;
  auto receiver = std::make_unique<MarkReceiver>(dir.path(), [&](const Mark& m, std::int64_t) {
    std::lock_guard lock(mutex);
    got.push_back(m);
  });
  receiver->start();
  const std::string address = receiver->address();
  EXPECT_TRUE(std::filesystem::is_socket(address));
  for (int i = 0; i < 100; ++i) {
    Mark m;
    m.kind = i % 2 == 0 ? MarkKind::Begin : MarkKind::End;
    m.mono_ns = 1000 + i;
    m.pid = getpid();
    m.name = "step";
    m.instance = std::to_string(i);
    EXPECT_EQ(send_mark(address, m).result, SendResult::Sent);
  }
  receiver->stop();  // hands on everything queued first
  {
    std::lock_guard lock(mutex);
    ASSERT_EQ(got.size(), 100U);
    for (int i = 0; i < 100; ++i) EXPECT_EQ(got[static_cast<std::size_t>(i)].mono_ns, 1000 + i);
  }
  Mark late;
  late.pid = 1;
  late.name = "late";
  EXPECT_EQ(send_mark(address, late).result, SendResult::Unreachable);
  const auto private_dir = std::filesystem::path(address).parent_path();
  receiver.reset();
  EXPECT_FALSE(std::filesystem::exists(private_dir));  // the directory goes with it
}

TEST(MarkSocket, SendingNeverBlocksWhenNobodyReads) {
  TempDir dir;
  std::atomic<int> got{0};
  MarkReceiver receiver(dir.path(), [&](const Mark&, std::int64_t) { ++got; });
  // Not started: nobody reads the connection. Every send returns at once, Sent or Busy.
  Mark m;
  m.pid = getpid();
  m.name = std::string(400, 'x');
  int busy = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 20000; ++i) {
    const auto r = send_mark(receiver.address(), m).result;
    ASSERT_TRUE(r == SendResult::Sent || r == SendResult::Busy) << static_cast<int>(r);
    busy += r == SendResult::Busy ? 1 : 0;
  }
  EXPECT_GT(busy, 0);  // the queue filled up and the sender was told, not stopped
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(MarkSocket, NoAddressAndBadAddress) {
  Mark m;
  m.pid = 1;
  m.name = "x";
  EXPECT_EQ(send_mark("", m).result, SendResult::NoProfiler);
  EXPECT_EQ(send_mark(std::string(200, 'a'), m).result, SendResult::Failed);
  EXPECT_EQ(send_mark("/nonexistent/dir/marks", m).result, SendResult::Unreachable);
}

TEST(MarkSocket, UnwritableParentIsAnError) {
  EXPECT_THROW(MarkReceiver("/proc/nonexistent", [](const Mark&, std::int64_t) {}), Error);
}

struct Collected {
  std::vector<Phase> phases;
  PhaseTracker tracker{[this](Phase p) { phases.push_back(std::move(p)); }};
};

PhaseEdge edge(const std::string& name, std::int64_t t, std::optional<std::int64_t> pid = 1) {
  return {PhaseSource::Mark, name, {}, pid, std::nullopt, t};
}

TEST(PhaseTracker, EndClosesTheLatestOfItsNameSameProcessFirst) {
  Collected c;
  c.tracker.begin(edge("step", 10, 1));
  c.tracker.begin(edge("step", 20, 2));
  c.tracker.begin(edge("step", 30, 1));  // nested in the first (same process)
  EXPECT_TRUE(c.tracker.end(edge("step", 40, 2)));
  EXPECT_TRUE(c.tracker.end(edge("step", 50, 1)));
  // A process with nothing open closes anyone's: a shell's marks come from new processes.
  EXPECT_TRUE(c.tracker.end(edge("step", 60, 99)));
  ASSERT_EQ(c.phases.size(), 3U);
  EXPECT_EQ(c.phases[0].start_mono_ns, 20);
  EXPECT_EQ(c.phases[0].end_mono_ns, 40);
  EXPECT_EQ(c.phases[1].start_mono_ns, 30);
  EXPECT_EQ(c.phases[1].end_mono_ns, 50);
  EXPECT_EQ(c.phases[2].start_mono_ns, 10);
  EXPECT_EQ(c.phases[2].end_mono_ns, 60);
  EXPECT_TRUE(c.tracker.problems().empty());
}

TEST(PhaseTracker, UnmatchedEndsAndNeverClosed) {
  Collected c;
  EXPECT_FALSE(c.tracker.end(edge("ghost", 5)));
  EXPECT_FALSE(c.tracker.end(edge("ghost", 6)));
  c.tracker.begin(edge("open", 10));
  c.tracker.point(edge("tick", 12));
  c.tracker.finish(100);
  ASSERT_EQ(c.phases.size(), 2U);
  EXPECT_TRUE(c.phases[0].point);
  EXPECT_EQ(c.phases[1].name, "open");
  EXPECT_FALSE(c.phases[1].closed);
  EXPECT_EQ(c.phases[1].end_mono_ns, 100);
  const auto problems = c.tracker.problems();
  ASSERT_EQ(problems.size(), 2U);
  EXPECT_EQ(problems[0],
            "2 phase ends closed nothing (no phase of that name was open): 'ghost' ×2");
  EXPECT_EQ(problems[1],
            "1 phase never ended and was closed at the end of the job (closed = 0 in the phases "
            "table): 'open' ×1");
}

TEST(PhaseTracker, AnEndBeforeItsBeginCannotMakeANegativePhase) {
  Collected c;
  c.tracker.begin(edge("x", 100));
  c.tracker.end(edge("x", 50));  // a clock that went backwards between two senders
  ASSERT_EQ(c.phases.size(), 1U);
  EXPECT_EQ(c.phases[0].end_mono_ns, 100);
}

TEST(PhaseTracker, TheCallbackMayCallBackIntoTheTracker) {
  // A callback that reads the tracker and closes another phase from inside itself: it holds no
  // lock of the tracker's (with emit_ called under its std::mutex, this deadlocked), and what it
  // closes is handed on after it returns, still in closing order.
  std::vector<std::string> emitted;
  std::vector<std::int64_t> open_seen, emitted_seen;
  PhaseTracker* self = nullptr;
  PhaseTracker tracker([&](Phase p) {
    emitted.push_back(p.name);
    open_seen.push_back(self->open_count());
    emitted_seen.push_back(self->emitted());
    if (p.name == "inner") {
      EXPECT_TRUE(self->end(edge("outer", p.end_mono_ns)));
    } else if (p.name == "outer") {
      self->point(edge("after", p.end_mono_ns));
    }
  });
  self = &tracker;
  tracker.begin(edge("outer", 10));
  tracker.begin(edge("inner", 20));
  EXPECT_TRUE(tracker.end(edge("inner", 30)));
  EXPECT_EQ(emitted, (std::vector<std::string>{"inner", "outer", "after"}));
  EXPECT_EQ(open_seen, (std::vector<std::int64_t>{1, 0, 0}));
  EXPECT_EQ(emitted_seen, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(tracker.emitted(), 3);
  EXPECT_TRUE(tracker.problems().empty());
}

TEST(PhaseTracker, OpenPhasesAreBounded) {
  std::int64_t emitted = 0;
  PhaseTracker tracker([&](Phase) { ++emitted; });
  for (std::size_t i = 0; i < PhaseTracker::kMaxOpen + 5; ++i) {
    tracker.begin(edge("leak", static_cast<std::int64_t>(i)));
  }
  EXPECT_EQ(tracker.open_count(), static_cast<std::int64_t>(PhaseTracker::kMaxOpen));
  EXPECT_EQ(tracker.problems().front(),
            "5 phase begins were dropped: 65536 phases were open at once, none of them ended");
}

TEST(OutputPhases, NamesFromPatterns) {
  EXPECT_EQ(name_from_pattern("epoch (\\d+) start"), "epoch");
  EXPECT_EQ(name_from_pattern("Saving checkpoint"), "Saving checkpoint");
  EXPECT_EQ(name_from_pattern("^step"), "^step");  // nothing literal before the anchor
  const auto p =
      parse_output_phases({"train=^epoch (\\d+)", "eval (\\d+) starts"}, {"eval=eval done"});
  ASSERT_EQ(p.size(), 2U);
  EXPECT_EQ(p[0].name, "train");
  EXPECT_EQ(p[1].name, "eval");
  EXPECT_TRUE(p[1].end);
  // A '=' inside a pattern is not a name.
  EXPECT_EQ(parse_output_phases({"loss=(\\d+) x=1"}, {})[0].name, "loss");
  EXPECT_EQ(parse_output_phases({"a[=]b"}, {})[0].name, "a");
}

TEST(OutputPhases, BadSpecsAreUsageErrors) {
  EXPECT_THROW(parse_output_phases({"x=("}, {}), Error);
  EXPECT_THROW(parse_output_phases({"x="}, {}), Error);
  EXPECT_THROW(parse_output_phases({"x=a", "x=b"}, {}), Error);
  EXPECT_THROW(parse_output_phases({"x=a"}, {"y=b"}), Error);
  EXPECT_THROW(parse_output_phases({"x=a"}, {"x=b", "x=c"}), Error);
  EXPECT_THROW(parse_output_phases({"x=a{1000000}"}, {}), Error);
}

TEST(OutputPhases, BeginsEndThePreviousAndEndPatternsEnd) {
  Collected c;
  OutputPhaseMatcher matcher(
      parse_output_phases({"epoch=epoch (\\d+)", "eval=eval starts"}, {"eval=eval done"}),
      c.tracker);
  matcher.on_line("epoch 1", 10);
  matcher.on_line("eval starts", 20);
  matcher.on_line("eval done", 30);
  matcher.on_line("epoch 2", 40);
  matcher.on_line("eval starts", 45);  // never done
  matcher.finish(50);
  c.tracker.finish(50);
  ASSERT_EQ(c.phases.size(), 4U);
  EXPECT_EQ(c.phases[0].name, "eval");  // closed first
  EXPECT_EQ(c.phases[0].start_mono_ns, 20);
  EXPECT_EQ(c.phases[0].end_mono_ns, 30);
  EXPECT_EQ(c.phases[1].name, "epoch");
  EXPECT_EQ(c.phases[1].instance, "1");
  EXPECT_EQ(c.phases[1].end_mono_ns, 40);
  EXPECT_EQ(c.phases[2].name, "epoch");  // ended by the job's end, as by a next begin
  EXPECT_TRUE(c.phases[2].closed);
  EXPECT_EQ(c.phases[3].name, "eval");  // has an end pattern that never came
  EXPECT_FALSE(c.phases[3].closed);
  EXPECT_EQ(c.phases[1].source, PhaseSource::Output);
}

TEST(OutputPhases, InstanceWithoutAGroupIsTheCount) {
  Collected c;
  OutputPhaseMatcher matcher(parse_output_phases({"step=^step"}, {}), c.tracker);
  matcher.on_line("step", 1);
  matcher.on_line("step", 2);
  matcher.finish(3);
  ASSERT_EQ(c.phases.size(), 2U);
  EXPECT_EQ(c.phases[0].instance, "1");
  EXPECT_EQ(c.phases[1].instance, "2");
}

}  // namespace
}  // namespace gpuscope::phases
