// A command line's definitions as plain data, read from the CLI11 App tree that `--help` prints:
// what the man pages and the shell completions are written from, so they cannot drift from it.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

namespace gpuscope::docgen {

// What a value of an option is, for completion.
enum class ValueKind {
  None,       // a flag: no value
  Word,       // free text, or one of `values`
  File,       // a file name
  Directory,  // a folder name
  Command,    // a command to run (after --)
};

struct OptionDoc {
  std::vector<std::string> names;  // as typed: "-o", "--output" (short names first)
  std::string value_name;          // "PATH"; empty for a flag
  std::string help;
  std::string group;            // CLI11's group: "Options", "Logs (docs/logs.md)", ...
  bool positional = false;      // then `names` is empty and `value_name` says what it is
  std::string positional_name;  // "inputs", "kind": the positional's own name
  bool many = false;            // takes several values (a list, or given several times)
  ValueKind kind = ValueKind::None;
  std::vector<std::string> values;  // the words it accepts, where the set is known
};

struct CommandDoc {
  std::string name;  // "profile"; the program's name for the top
  std::string description;
  std::string footer;
  std::vector<OptionDoc> options;  // hidden ones (CLI11 group "") left out
  std::vector<CommandDoc> commands;
};

// What an option accepts that its definition does not say (a set checked in the workflow, the
// shipped scenarios): long option name ("--simulate") or positional name ("kind") to words.
using ValueLists = std::map<std::string, std::vector<std::string>>;

// Reads `app` and its visible subcommands. An option's value set comes from, in order: its
// CLI11 IsMember check, a type name of words ("off|safe|full"), then `extra`.
CommandDoc describe(CLI::App& app, const ValueLists& extra = {});

// "gpuscope profile" for a command under the top; the top's own name for the top.
std::string full_name(const CommandDoc& top, const CommandDoc& command);

}  // namespace gpuscope::docgen
