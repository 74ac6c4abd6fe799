// `gpuscope help --man DIR | --completion bash|zsh`: the man pages and shell completions,
// written by docgen/ from the command line's own definitions, with what those definitions do not
// say: the words some options accept (checked in the workflows, or found at run time like the
// shipped scenarios) and the examples of each page.
#pragma once

#include <string>
#include <vector>

#include "docgen/command_doc.hpp"
#include "docgen/man_page.hpp"

namespace gpuscope::app {

// Option ("--simulate") or positional ("kind") name to the words it accepts: each one from the
// list the workflow checks against where it has one (metrics, regions, scenarios, input
// formats), else the words its parser accepts (tests/app/command_docs_test.cpp checks each).
docgen::ValueLists completion_values();

// The pages' examples (from README.md and docs/cli.md).
std::vector<docgen::Example> command_examples();

struct HelpOptions {
  std::string man_dir;     // write the man pages here (a folder, created if missing)
  std::string completion;  // print the completion script of this shell: bash or zsh
  std::string date;        // the pages' date; default SOURCE_DATE_EPOCH's, else today (UTC)
};

// Does what `options` ask; with neither, prints `help_text` (gpuscope --help). Throws Error.
int run_help(const docgen::CommandDoc& top, const HelpOptions& options, const std::string& version,
             const std::string& help_text);

}  // namespace gpuscope::app
