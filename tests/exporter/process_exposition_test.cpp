// The processes on the GPUs as Prometheus series: per-process lines with bounded labels, and the
// workload labels serve puts on a GPU's series.
#include "exporter/process_exposition.hpp"

#include <gtest/gtest.h>

#include "exporter/exposition.hpp"

namespace gpuscope::exporter {
namespace {

std::pair<ProcessSample, GpuProcess> process(unsigned device, unsigned pid,
                                             std::optional<std::uint64_t> bytes,
                                             std::optional<std::string> pod = std::nullopt) {
  ProcessSample s;
  s.device_index = device;
  s.pid = pid;
  s.used_memory_bytes = bytes;
  s.sm_percent = 25;
  GpuProcess p;
  p.pid = pid;
  p.command = "python";
  p.user = "bob";
  if (pod) {
    p.pod_name = pod;
    p.pod_namespace = "ml";
    p.container_id = std::string(64, 'c');
  }
  return {s, p};
}

std::string labels_of(unsigned device) {
  return "gpu=\"" + std::to_string(device) + "\",hostname=\"n1\"";
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ProcessExposition, OneLinePerProcessWithItsLabels) {
  const ProcessesNow now{process(0, 10, 1ULL << 30, "train-0")};
  const std::string page = render_processes(now, labels_of, 8);
  EXPECT_NE(page.find("# TYPE gpuscope_process_memory_used_bytes gauge"), std::string::npos);
  EXPECT_NE(page.find("gpuscope_process_memory_used_bytes{gpu=\"0\",hostname=\"n1\",pid=\"10\","
                      "command=\"python\",user=\"bob\",container=\"cccccccccccc\",pod=\"train-0\","
                      "namespace=\"ml\"} 1073741824\n"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("gpuscope_process_sm_utilization_ratio{"), std::string::npos);
  EXPECT_NE(page.find("} 0.25\n"), std::string::npos);
}

TEST(ProcessExposition, AtMostMaxPerGpuTheLargestFirst) {
  ProcessesNow now;
  for (unsigned pid = 1; pid <= 5; ++pid) now.push_back(process(0, pid, pid * 1000ULL));
  now.push_back(process(1, 99, std::nullopt));  // the driver would not say: no memory line
  const std::string page = render_processes(now, labels_of, 2);
  EXPECT_EQ(count(page, "gpuscope_process_memory_used_bytes{"), 2U);
  EXPECT_NE(page.find("pid=\"5\""), std::string::npos);
  EXPECT_NE(page.find("pid=\"4\""), std::string::npos);
  EXPECT_EQ(page.find("pid=\"3\""), std::string::npos);
  EXPECT_NE(page.find("gpuscope_processes_not_exported{gpu=\"0\",hostname=\"n1\"} 3\n"),
            std::string::npos);
  EXPECT_NE(page.find("gpuscope_process_sm_utilization_ratio{gpu=\"1\""), std::string::npos);
}

TEST(ProcessExposition, HostileValuesAreEscaped) {
  auto p = process(0, 7, 1);
  p.second.command = "evil\"}\nx";
  const std::string page = render_processes({p}, labels_of, 8);
  EXPECT_NE(page.find("command=\"evil\\\"}\\nx\""), std::string::npos) << page;
}

TEST(ProcessExposition, GpusNotServedAndEmptyLooksGiveNothing) {
  EXPECT_EQ(render_processes({}, labels_of, 8), "");
  EXPECT_EQ(render_processes(
                {process(3, 1, 1)}, [](unsigned) { return std::string(); }, 8),
            "");
}

TEST(ProcessExposition, WorkloadIsTheKnownProcessHoldingTheMostMemory) {
  // An unresolved pid holds more, but says nothing about the workload.
  const ProcessesNow now{process(0, 1, 9000), process(0, 2, 500, "train-0"),
                         process(0, 3, 100, "other"), process(1, 4, 10)};
  auto labels = workload_labels(now, Naming::Gpuscope);
  ASSERT_EQ(labels.count(0), 1U);
  EXPECT_EQ(labels.count(1), 0U);  // nothing known about GPU 1's process
  const LabelList expected{{"pod", "train-0"}, {"namespace", "ml"}, {"container", "cccccccccccc"}};
  EXPECT_EQ(labels[0], expected);

  auto slurm = process(0, 5, 1);
  slurm.second.slurm_job_id = "4242";
  EXPECT_EQ(workload_labels({slurm}, Naming::Gpuscope)[0], (LabelList{{"slurm_job_id", "4242"}}));
  EXPECT_EQ(workload_labels({slurm}, Naming::Dcgm)[0], (LabelList{{"hpc_job", "4242"}}));
  // AMD's Device Metrics Exporter calls it job_id.
  EXPECT_EQ(workload_labels({slurm}, Naming::Amd)[0], (LabelList{{"job_id", "4242"}}));
  EXPECT_EQ(workload_labels({process(0, 7, 2)}, Naming::Amd).count(0), 0U);
}

TEST(ProcessExposition, JobstatsWorkloadIsTheSlurmJobAndItsUsersUid) {
  // A pod's process holds more memory, but jobstats' exporter knows SLURM jobs only.
  auto slurm = process(0, 5, 100);
  slurm.second.slurm_job_id = "4242";
  slurm.second.uid = 1001;
  auto no_uid = process(1, 6, 100);
  no_uid.second.slurm_job_id = "77";
  const ProcessesNow now{process(0, 1, 9000, "train-0"), slurm, no_uid, process(2, 7, 5, "p")};
  auto labels = workload_labels(now, Naming::Jobstats);
  EXPECT_EQ(labels[0], (LabelList{{"jobid", "4242"}, {"userid", "1001"}}));
  EXPECT_EQ(labels[1], (LabelList{{"jobid", "77"}, {"userid", ""}}));
  EXPECT_EQ(labels.count(2), 0U);
}

TEST(ProcessExposition, TheGpusSeriesCarryTheWorkloadAndLoseItAgain) {
  GpuIdentity gpu;
  gpu.index = 0;
  gpu.uuid = "GPU-1";
  Exposition exposition(Naming::Gpuscope, {"n1", {}, ""}, {gpu});
  EXPECT_EQ(exposition.label_body(0), "gpu=\"0\",uuid=\"GPU-1\",hostname=\"n1\"");
  EXPECT_EQ(exposition.label_body(5), "");
  SampleRow row;
  row.device_index = 0;
  row.set(Metric::PowerW, 100);
  exposition.set_workload({{0, {{"pod", "train-0"}}}});
  std::string out;
  exposition.append_lines(row, out);
  EXPECT_NE(
      out.find("gpuscope_power_watts{gpu=\"0\",uuid=\"GPU-1\",hostname=\"n1\",pod=\"train-0\"}"),
      std::string::npos)
      << out;
  exposition.set_workload({});
  out.clear();
  exposition.append_lines(row, out);
  EXPECT_EQ(out.find("pod="), std::string::npos);
}

// --process-series: what each choice leaves on the page (docs/live.md, "What it reveals").
ProcessesNow with_job_and_pod() {
  auto slurm = process(1, 20, 1ULL << 20);
  slurm.second.slurm_job_id = "4242";
  slurm.second.uid = 1001;
  slurm.second.command_line = "python train.py --token hunter2";
  return {process(0, 10, 1ULL << 30, "train-0"), slurm};
}

TEST(ProcessSeriesPolicy, FullShowsEveryLabel) {
  const ProcessesNow now = reveal(with_job_and_pod(), ProcessSeries::Full);
  const std::string page = render_processes(now, labels_of, 8);
  EXPECT_EQ(count(page, "command=\"python\""), 4U) << page;  // memory and SM, two processes
  EXPECT_EQ(count(page, "user=\"bob\""), 4U) << page;
  EXPECT_EQ(workload_labels(now, Naming::Jobstats)[1],
            (LabelList{{"jobid", "4242"}, {"userid", "1001"}}));
}

TEST(ProcessSeriesPolicy, SafeKeepsPidContainerPodAndJobButNotUserOrCommand) {
  const ProcessesNow now = reveal(with_job_and_pod(), ProcessSeries::Safe);
  const std::string page = render_processes(now, labels_of, 8);
  EXPECT_NE(page.find("gpuscope_process_memory_used_bytes{gpu=\"0\",hostname=\"n1\",pid=\"10\","
                      "container=\"cccccccccccc\",pod=\"train-0\",namespace=\"ml\"} 1073741824\n"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("pid=\"20\",slurm_job_id=\"4242\"}"), std::string::npos) << page;
  EXPECT_EQ(page.find("user="), std::string::npos) << page;
  EXPECT_EQ(page.find("command="), std::string::npos) << page;
  EXPECT_EQ(page.find("bob"), std::string::npos) << page;
  EXPECT_EQ(page.find("python"), std::string::npos) << page;
  for (const auto& [sample, p] : now) EXPECT_FALSE(p.command_line || p.uid || p.user || p.command);
  // The GPUs' workload labels stay; jobstats' userid (the user's uid) goes empty, as when the
  // uid is unknown.
  EXPECT_EQ(workload_labels(now, Naming::Gpuscope)[0],
            (LabelList{{"pod", "train-0"}, {"namespace", "ml"}, {"container", "cccccccccccc"}}));
  EXPECT_EQ(workload_labels(now, Naming::Jobstats)[1],
            (LabelList{{"jobid", "4242"}, {"userid", ""}}));
}

TEST(ProcessSeriesPolicy, OffHasNoProcessSeriesButTheGpusKeepTheirWorkload) {
  const ProcessSeries off = ProcessSeries::Off;
  const ProcessesNow now = reveal(with_job_and_pod(), off);
  // More processes than shown would otherwise give gpuscope_processes_not_exported.
  EXPECT_EQ(render_processes(now, labels_of, processes_shown(off, 8)), "");
  EXPECT_EQ(processes_shown(ProcessSeries::Safe, 8), 8U);
  EXPECT_EQ(workload_labels(now, Naming::Dcgm)[1], (LabelList{{"hpc_job", "4242"}}));
  EXPECT_EQ(workload_labels(now, Naming::Jobstats)[1],
            (LabelList{{"jobid", "4242"}, {"userid", ""}}));
}

TEST(ProcessSeriesPolicy, ChoicesAndDefault) {
  for (const auto series : {ProcessSeries::Off, ProcessSeries::Safe, ProcessSeries::Full}) {
    EXPECT_EQ(process_series_from_text(process_series_text(series)), series);
  }
  EXPECT_FALSE(process_series_from_text("Full"));
  EXPECT_FALSE(process_series_from_text(""));
  EXPECT_EQ(default_process_series(true), ProcessSeries::Full);
  EXPECT_EQ(default_process_series(false), ProcessSeries::Safe);
}

}  // namespace
}  // namespace gpuscope::exporter
