#include "app/profile/profile_live.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "app/profile/push.hpp"
#include "core/clock.hpp"

namespace gpuscope::app {
namespace {

exporter::ExportLabels labels_of(const RunInfo& info) {
  exporter::ExportLabels labels;
  labels.hostname = info.host;
  const SlurmContext& s = info.slurm;
  if (s.job_id) labels.extra.emplace_back("slurm_job_id", *s.job_id);
  if (s.step_id) labels.extra.emplace_back("slurm_step_id", *s.step_id);
  if (s.rank) labels.extra.emplace_back("slurm_rank", std::to_string(*s.rank));
  // Under another launcher (mpirun, torchrun, ...), its rank and job (docs/launchers.md).
  const RankContext& r = info.ranks;
  if (r.active() && r.launcher != "slurm") {
    labels.extra.emplace_back("launcher", *r.launcher);
    if (r.job_id) labels.extra.emplace_back("launcher_job_id", *r.job_id);
    if (r.rank) labels.extra.emplace_back("rank", std::to_string(*r.rank));
  }
  if (r.pod_name) labels.extra.emplace_back("pod", *r.pod_name);
  if (r.pod_namespace) labels.extra.emplace_back("namespace", *r.pod_namespace);
  if (!info.label.empty()) labels.extra.emplace_back("label", info.label);
  return labels;
}

}  // namespace

ProfileLive::ProfileLive(const ProfileOptions& o, const RunInfo& info,
                         const std::vector<DeviceDescription>& sampled)
    : options_(o), terminal_(isatty(STDERR_FILENO) != 0) {
  std::vector<exporter::GpuIdentity> identities = exporter::identities_of(sampled);
  if (o.live) latest_ = std::make_unique<exporter::LatestValues>(identities);
  check_push_options(o.push);
  if (o.push.enabled()) {
    exposition_ = std::make_unique<exporter::Exposition>(exporter::Naming::Gpuscope,
                                                         labels_of(info), identities);
    pusher_ = make_pusher(o.push, *exposition_);
  }
}

ProfileLive::~ProfileLive() = default;

collect::SampleSink& ProfileLive::sink(collect::SampleSink& run_sink) {
  if (!latest_ && !pusher_) return run_sink;
  std::vector<collect::SampleSink*> sinks{&run_sink};
  if (latest_) sinks.push_back(latest_.get());
  if (pusher_) sinks.push_back(pusher_.get());
  tee_ = std::make_unique<exporter::TeeSink>(std::move(sinks));
  return *tee_;
}

void ProfileLive::start() {
  if (pusher_) pusher_->start();
}

void ProfileLive::draw() {
  if (!latest_) return;
  const std::int64_t now = mono_now_ns();
  // A log file gets a table a minute, a terminal one a second, redrawn in place.
  if (!terminal_ && last_drawn_ns_ != 0 && now - last_drawn_ns_ < 60'000'000'000) return;
  last_drawn_ns_ = now;
  const std::string table = exporter::monitor_table(latest_->snapshot());
  const std::string text = terminal_ ? frame_.redraw(table) : table;
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

void ProfileLive::finish(RunEnd& end) {
  if (!pusher_) return;
  const exporter::PushSummary s = pusher_->finish(std::chrono::seconds(5));
  if (s.lines_pending > 0) {
    end.problems.push_back(fmt::format(
        "push: {} samples could not be delivered to {} before gpuscope stopped ({} delivered); "
        "the run database has them all",
        s.lines_pending, options_.push.url, s.lines_sent));
  }
  if (s.lines_dropped > 0) {
    end.problems.push_back(
        fmt::format("push: {} samples were dropped by a full buffer or "
                    "refused by the server",
                    s.lines_dropped));
  }
}

}  // namespace gpuscope::app
