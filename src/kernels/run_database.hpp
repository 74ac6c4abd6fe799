// The kernel trace of a gpuscope run database (`profile --trace-kernels`, schema 1.2) as the
// same durations the nsys reader gives, so `gpuscope kernels run.db` summarises it with the same
// code as an Nsight Systems export (docs/kernels.md).
#pragma once

#include <filesystem>
#include <vector>

#include "kernels/summary.hpp"

namespace gpuscope::kernels {

// Whether `file` is a gpuscope run database (an SQLite file with gpuscope's application_id),
// judged from its header without opening it as a database.
bool is_run_database(const std::filesystem::path& file);

// One report per run of the database (a merged database holds one run per rank), its `file`
// naming the run ("job.db (node1 rank 3)" when there are several). A run without a trace gives
// an empty report with a note. Throws Error::usage when the file is not a run database this
// gpuscope reads.
std::vector<KernelReport> read_run_database(const std::filesystem::path& file, NameColumn names);

}  // namespace gpuscope::kernels
