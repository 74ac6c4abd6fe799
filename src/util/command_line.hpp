// A command as a person would type it into a shell.
#pragma once

#include <string>
#include <vector>

namespace gpuscope::util {

// The words joined by spaces, each word with shell metacharacters (or empty) single-quoted:
// {"sh", "-c", "echo hi"} → "sh -c 'echo hi'". The one renderer of a command line for people.
std::string shell_command_line(const std::vector<std::string>& argv);

}  // namespace gpuscope::util
