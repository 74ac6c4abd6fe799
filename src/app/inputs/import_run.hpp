// `gpuscope import` and `gpuscope merge`: foreign data into a run database the user keeps
// (through the ingest layer), and several run databases into one.
#pragma once

#include <string>
#include <vector>

#include "ingest/format.hpp"

namespace gpuscope::app {

struct ImportRun {
  std::vector<std::string> inputs;
  ingest::ReadOptions read;  // for logs (docs/logs.md)
  std::string output;
  bool force = false;  // replace an existing output file
};

// Imports every input into `o.output`, saying on stderr what was written and left out; returns
// the exit code. Throws Error (usage for an input no format reads).
int run_import(const ImportRun& o);

// Merges the runs of every input (run databases, folders of them, foreign data) into
// `o.output`; returns the exit code.
int run_merge(const ImportRun& o);

}  // namespace gpuscope::app
