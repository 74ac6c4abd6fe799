// The gpuscope command line: parses arguments, runs the chosen subcommand, and turns every Error
// into one "gpuscope: error: ..." line on stderr with the right exit code.
#pragma once

namespace gpuscope::cli {

int run(int argc, char** argv);

}  // namespace gpuscope::cli
