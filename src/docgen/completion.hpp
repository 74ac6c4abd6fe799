// Shell completion scripts from a command line's definitions: the commands, each command's
// options, the words an option accepts where the set is known, files and folders where a value
// names one, and the command to run after "--".
#pragma once

#include <string>

#include "docgen/command_doc.hpp"

namespace gpuscope::docgen {

// A bash script defining _<program>() and registering it with `complete -F`. Needs bash 4 and
// nothing else (no bash-completion helpers), so it also works sourced by hand.
std::string bash_completion(const CommandDoc& top);

// A zsh script (#compdef <program>) for a folder in $fpath, written with _arguments.
std::string zsh_completion(const CommandDoc& top);

}  // namespace gpuscope::docgen
