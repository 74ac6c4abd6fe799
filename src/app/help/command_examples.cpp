// The man pages' examples, from README.md and docs/cli.md. tests/app/command_docs_test.cpp checks
// that each one's options are options of its command.
#include "app/help/command_docs.hpp"

namespace gpuscope::app {

std::vector<docgen::Example> command_examples() {
  return {
      {"", "Try gpuscope without a GPU: list the shipped scenarios, then a simulated node.",
       "gpuscope scenarios\ngpuscope devices --simulate h100x4-straggler"},
      {"", "Profile a job, then read what it did.",
       "gpuscope profile -o run.db -- python train.py --epochs 3\n"
       "gpuscope analyze run.db --region DE\ngpuscope report run.db -o report.html"},
      {"profile", "Profile a job; gpuscope exits with its status.",
       "gpuscope profile -o run.db -- python train.py --epochs 3"},
      {"profile", "The same, the job given as one shell string.",
       "gpuscope profile -o run.db --wrap \"python train.py --epochs 3\""},
      {"profile", "Under SLURM: one run database per rank in runs/, merged afterwards.",
       "srun -N 2 -n 8 gpuscope profile -o runs/ -- python train.py\ngpuscope merge job.db runs/"},
      {"profile", "Simulated GPUs, no driver needed.",
       "gpuscope profile --simulate h100 -o run.db -- sleep 2"},
      {"profile", "Record the job's CUDA kernels, and its output lines as phases.",
       "gpuscope profile --trace-kernels -o run.db -- python train.py\n"
       "gpuscope profile -o run.db --phase 'epoch=epoch (\\d+) start' -- ./job.sh"},
      {"profile", "Show the live table and push the samples to VictoriaMetrics.",
       "gpuscope profile --live --push http://vm:8428 -o run.db -- python train.py"},
      {"analyze", "Summarise a run with Germany's grid intensity.",
       "gpuscope analyze run.db --region DE"},
      {"analyze", "The UK grid's intensity over the run, half hour by half hour.",
       "gpuscope analyze run.db --carbon-source uk --carbon-region \"South England\""},
      {"analyze", "Logs of nvidia-smi, and gssr's folders, are read directly.",
       "gpuscope analyze gpu.csv --timezone Europe/Zurich\n"
       "gpuscope analyze profile_out_JobID_4242 --detect-outliers none"},
      {"analyze", "Per-GPU time series as CSV, and gssr's plots.",
       "gpuscope analyze run.db --aggregate time --csv\ngpuscope analyze run.db -pts -plb"},
      {"report", "One self-contained HTML report.",
       "gpuscope report run.db -o report.html --region DE"},
      {"report", "Static plots: PNG files with a prefix, or one PDF.",
       "gpuscope report run.db -o plots/run.png\ngpuscope report run.db -o run.pdf"},
      {"job", "A SLURM job that gpuscope did not wrap, from the site's Prometheus.",
       "gpuscope job 1\ngpuscope job 1 -o job.html"},
      {"job", "Hosts over a window instead of a job.",
       "gpuscope job --hosts gpu01,gpu02 --from 2026-11-25T08:00Z --to 2026-11-25T12:00Z"},
      {"job", "The job's row as gpuscope jobs gives it.", "gpuscope job 1 --row"},
      {"jobs", "Every GPU job that ended this week, the most idle GPU-hours first.",
       "gpuscope jobs --from 2026-11-23T00:00Z --to now"},
      {"jobs", "Keep them in the accounting database (a systemd timer runs this).",
       "gpuscope jobs --update --db /var/lib/gpuscope/jobs.db"},
      {"jobs", "The site report of November, from the database.",
       "gpuscope jobs --db /var/lib/gpuscope/jobs.db --from 2026-11-01T00:00Z --to "
       "2026-12-01T00:00Z -o site.html"},
      {"usage", "GPU-hours, energy and CO2 per account this quarter.",
       "gpuscope usage --by account --db /var/lib/gpuscope/jobs.db --from 2026-10-01T00:00Z"},
      {"usage", "One user's jobs day by day, as CSV.",
       "gpuscope usage --by day --user alice --from 2026-11-01T00:00Z --csv"},
      {"mail", "SLURM's MailProg: a link named gpuscope-mail is gpuscope mail (no shell).",
       "ln -s /usr/bin/gpuscope /usr/local/sbin/gpuscope-mail\n"
       "echo MailProg=/usr/local/sbin/gpuscope-mail >>/etc/slurm/slurm.conf"},
      {"guard", "What guard would do now, without doing it.",
       "gpuscope guard --rules /etc/gpuscope/guard.yaml --once --dry-run"},
      {"guard", "Watch every 5 minutes as the Slurm admin user (a systemd service runs this).",
       "gpuscope guard --rules /etc/gpuscope/guard.yaml --interval 5m"},
      {"health-check", "Slurm's HealthCheckProgram: drain this node when a GPU is broken.",
       "echo 'HealthCheckProgram=/usr/local/sbin/gpu-health' >>/etc/slurm/slurm.conf\n"
       "# /usr/local/sbin/gpu-health: exec gpuscope health-check --expect-gpus 4 --drain"},
      {"health-check", "In a Prolog: a nonzero exit drains the node and requeues the job.",
       "gpuscope health-check --expect-gpus 4 --rules /etc/gpuscope/guard.yaml"},
      {"merge", "Combine per-rank run databases.", "gpuscope merge job.db runs/"},
      {"import", "Keep an nvidia-smi log or a gssr folder as a run database.",
       "gpuscope import gpu.csv -o gpu.db\ngpuscope import profile_out_JobID_4242 -o train.db"},
      {"devices", "The GPUs of a simulated node.", "gpuscope devices --simulate h100x4-straggler"},
      {"devices", "As JSON.", "gpuscope devices --json"},
      {"scenarios", "The shipped scenarios, for --simulate NAME.", "gpuscope scenarios"},
      {"monitor", "A live table, redrawn in place; Ctrl-C stops.",
       "gpuscope monitor --simulate h100x4-straggler"},
      {"monitor", "One snapshot for scripts.", "gpuscope monitor --once --json"},
      {"serve", "A Prometheus exporter, with dcgm-exporter's names.",
       "gpuscope serve --listen 0.0.0.0:9400 --naming dcgm"},
      {"serve", "TLS and basic auth from node_exporter's web configuration file.",
       "gpuscope serve --listen 0.0.0.0:9400 --web-config web-config.yml"},
      {"sweep", "Find the most efficient power limit (needs root to set limits).",
       "gpuscope sweep --power-limits 200:700:100 --repeat 3 \\\n"
       "    --work-regex 'processed ([0-9]+) samples' -o sweep.db -- python train.py"},
      {"kernels", "The five longest kernels of a run recorded with --trace-kernels.",
       "gpuscope kernels run.db --top 5"},
      {"export", "The run as a trace for ui.perfetto.dev.",
       "gpuscope export --perfetto trace.json run.db"},
      {"mark", "Mark phases of the profiled job from its shell script.",
       "gpuscope mark begin checkpoint\ncp -r ckpt /scratch/\ngpuscope mark end checkpoint"},
  };
}

}  // namespace gpuscope::app
