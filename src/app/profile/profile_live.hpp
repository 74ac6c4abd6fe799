// What `profile --live` and `profile --push` add to a run: the monitor's table on stderr while
// the job runs, and the samples pushed to VictoriaMetrics. Neither can stop or slow the job: the
// pusher has its own thread and only says what went wrong.
#pragma once

#include <memory>
#include <vector>

#include "app/profile/profile_options.hpp"
#include "collect/sink.hpp"
#include "core/run.hpp"
#include "exporter/exposition.hpp"
#include "exporter/latest_values.hpp"
#include "exporter/monitor_view.hpp"
#include "exporter/pusher.hpp"
#include "exporter/tee_sink.hpp"

namespace gpuscope::app {

class ProfileLive {
 public:
  // Checks --push (Error::usage when its URL or credentials are wrong); starts nothing.
  ProfileLive(const ProfileOptions& options, const RunInfo& info,
              const std::vector<DeviceDescription>& sampled);
  ~ProfileLive();

  // The sink for the sampler: `run_sink` alone, or together with the table and the pusher.
  collect::SampleSink& sink(collect::SampleSink& run_sink);
  void start();
  bool live() const { return latest_ != nullptr; }
  // Redraws the table on stderr (called about every second by the launcher's wait loop).
  void draw();
  // Delivers what the pusher still holds (a few seconds at most) and adds any loss to `end`.
  void finish(RunEnd& end);

 private:
  const ProfileOptions& options_;
  std::unique_ptr<exporter::LatestValues> latest_;
  std::unique_ptr<exporter::Exposition> exposition_;
  std::unique_ptr<exporter::Pusher> pusher_;
  std::unique_ptr<exporter::TeeSink> tee_;
  exporter::InPlaceFrame frame_;
  bool terminal_ = false;
  std::int64_t last_drawn_ns_ = 0;
};

}  // namespace gpuscope::app
