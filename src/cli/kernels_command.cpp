// `gpuscope kernels REPORT.sqlite|RUN.db...`: nsys's cuda_gpu_kern_sum and a memcpy/memset
// summary of Nsight Systems SQLite exports or of the kernel trace of gpuscope run databases
// (profile --trace-kernels), summed over ranks or per rank (docs/kernels.md).
#include <memory>

#include "app/inputs/kernels_run.hpp"
#include "cli/command.hpp"
#include "cli/number_option.hpp"

namespace gpuscope::cli {

Command add_kernels_command(CLI::App& parent) {
  auto o = std::make_shared<app::KernelsRun>();
  CLI::App* app = parent.add_subcommand(
      "kernels",
      "Per-kernel time (nsys cuda_gpu_kern_sum) and memcpy/memset summary of Nsight Systems "
      "SQLite exports or of run databases of 'profile --trace-kernels'");
  app->add_option("inputs", o->inputs,
                  "nsys SQLite exports ('nsys export --type sqlite R.nsys-rep'), one per rank, "
                  "or run databases of 'gpuscope profile --trace-kernels' (one summary per run "
                  "with --per-rank)")
      ->required()
      ->type_name("REPORT.sqlite|RUN.db...");
  app->add_option("--name", o->names,
                  "Name kernels by their demangled name or nsys's short name (default demangled)")
      ->check(CLI::IsMember({"demangled", "short"}))
      ->type_name("demangled|short");
  add_number_option(*app, "--top", o->top, NumberRange(1, 1e9).whole(),
                    "Show only the N kernels with the most total time")
      ->type_name("N");
  app->add_flag("--per-rank", o->per_rank,
                "One summary per file (per run of a run database) instead of their sum");
  app->add_flag("--import", o->import,
                "First import the trace files a stopped 'profile --trace-kernels' left in "
                "RUN.db.trace/");
  app->add_flag("--json", o->json, "Print JSON");
  app->add_flag("--csv", o->csv, "Print CSV");
  return {app, [o] { return app::run_kernels(*o); }};
}

}  // namespace gpuscope::cli
