// Man pages (troff, the man macros) from a command line's definitions: gpuscope(1) for the
// program and its commands, gpuscope-COMMAND(1) for each command, with every visible option and
// its help text as `--help` prints them.
#pragma once

#include <string>
#include <vector>

#include "docgen/command_doc.hpp"

namespace gpuscope::docgen {

struct Example {
  std::string command;  // "profile"; empty for the program's own page
  std::string what;     // one sentence: what it does
  std::string line;     // the command line, as typed
};

struct ManPage {
  std::string file_name;  // "gpuscope-profile.1"
  std::string text;
};

struct ManContext {
  std::string version;  // "gpuscope 0.1.0"
  std::string date;     // "2025-01-31"
  std::vector<Example> examples;
  std::string extra_top;  // more sections for the program's page, troff already
};

// The program's page, then one page per command, in the order of `top.commands`.
std::vector<ManPage> man_pages(const CommandDoc& top, const ManContext& context);

// `text` as troff body text: backslashes, option dashes and control characters at line starts
// escaped.
std::string troff_text(const std::string& text);

}  // namespace gpuscope::docgen
