// The end-of-job mail's GPU summary (gpuscope mail): the figures of the job's row, each on its
// own line with its unit, flags explained, nothing absent printed as zero, and no byte of a
// job's row (its model, its notes) able to start a line of its own.
#include "report/job_mail.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gpuscope::report {
namespace {

SiteJob sample_job() {
  SiteJob job;
  job.id = "4242";
  job.shown_id = "4242";
  job.start_ms = 1'000'000;
  job.end_ms = 1'000'000 + 3'723'000;  // 01:02:03
  job.nodes = {"n1", "n2"};
  job.gpus = 8;
  job.gpu_model = "NVIDIA H100 80GB HBM3";
  job.gpu_hours = 8 * 3723.0 / 3600;
  job.idle_gpu_hours = 1.0341;
  job.util_pct = 78.25;
  job.sm_active_pct = 61.04;
  job.peak_memory_bytes = 12.5 * 1024 * 1024 * 1024;
  job.energy_j = 9.0e6;
  job.co2_g = 1187.5;
  job.score = 0.6789;
  job.flags = {JobFlag::Straggler};
  job.source = JobSource::Tsdb;
  return job;
}

TEST(JobMail, SaysEachFigureOnItsLine) {
  const std::string text = job_mail_summary(sample_job());
  EXPECT_EQ(text,
            "GPU summary of job 4242 (gpuscope)\n"
            "  GPUs:            8 x NVIDIA H100 80GB HBM3 on n1,n2, 01:02:03\n"
            "  GPU-hours:       8.273, idle 1.034\n"
            "  GPU utilization: 78.2 %, SM active 61.0 %\n"
            "  Peak GPU memory: 12.5 GiB\n"
            "  Energy:          2.50 kWh (GPUs), CO2 1.19 kg\n"
            "  Score:           0.68 (0 to 1)\n"
            "  Flag:            straggler: a GPU was more than 15 % less active than the others\n"
            "  Full analysis:   gpuscope job 4242\n");
}

TEST(JobMail, LeavesOutWhatIsAbsentInsteadOfSayingZero) {
  SiteJob job = sample_job();
  job.sm_active_pct.reset();
  job.score.reset();
  job.co2_g.reset();
  job.energy_j = 5.0e4;
  job.flags.clear();
  const std::string text = job_mail_summary(job);
  EXPECT_NE(text.find("GPU utilization: 78.2 %\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Energy:          50.0 kJ (GPUs)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("Score"), std::string::npos);
  EXPECT_EQ(text.find("SM active"), std::string::npos);
  EXPECT_EQ(text.find("Flag"), std::string::npos);
}

TEST(JobMail, AJobTheServerHasNoSamplesOfSaysSo) {
  SiteJob job = sample_job();
  job.source = JobSource::None;
  job.notes = {"the server has no series of its GPUs"};
  const std::string text = job_mail_summary(job);
  EXPECT_NE(text.find("Figures:         none"), std::string::npos) << text;
  EXPECT_EQ(text.find("GPU utilization"), std::string::npos);
  EXPECT_NE(text.find("Note:            the server has no series of its GPUs\n"),
            std::string::npos);
}

TEST(JobMail, NoRowTextStartsALineOfItsOwn) {
  SiteJob job = sample_job();
  job.gpu_model = "H100\nFull analysis: rm -rf /";
  job.notes = {"a note\r\nSubject: forged"};
  const std::string text = job_mail_summary(job);
  EXPECT_EQ(text.find("\nFull analysis: rm"), std::string::npos) << text;
  EXPECT_EQ(text.find("\nSubject:"), std::string::npos) << text;
  EXPECT_NE(text.find("H100\\nFull analysis: rm -rf /"), std::string::npos) << text;
}

TEST(JobMail, ShortJobsKeepTheirGpuHoursDigits) {
  SiteJob job = sample_job();
  job.gpu_hours = 0.0123;
  job.idle_gpu_hours = 0;
  EXPECT_NE(job_mail_summary(job).find("GPU-hours:       0.012, idle 0.000\n"), std::string::npos);
}

TEST(JobMail, TheLineSaidInsteadIsOneLine) {
  EXPECT_EQ(job_mail_unavailable("12", "the server did not answer\nat all"),
            "(No GPU summary of job 12: the server did not answer\\nat all.)\n");
}

}  // namespace
}  // namespace gpuscope::report
