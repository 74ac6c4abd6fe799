// The one way foreign data enters gpuscope (ARCHITECTURE.md, "The ingest layer"): a reader per
// format recognises its inputs and writes what they hold as runs of a run database through the
// RunWriter (RunTarget); every command then reads run databases. A format invents nothing: what
// it lacks is absent (NULL), and said once as a note and a problem on its runs.
#pragma once

#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "ingest/run_target.hpp"

namespace gpuscope::ingest {

class Format {
 public:
  virtual ~Format() = default;
  // Its name in messages ("gssr"): "X is not gssr data".
  virtual std::string_view name() const = 0;
  // What its inputs are, for messages and help: "gssr profile folders (...), process files ...".
  virtual std::string_view inputs() const = 0;
  // Whether `path` is an input of this format: from its name, or a cheap look inside; never
  // throws (an unreadable path is not recognised).
  virtual bool recognises(const std::filesystem::path& path) const = 0;
  // Writes what `inputs` (each recognised by this format) hold as runs of `target`. Throws
  // Error naming the input and what is wrong with it.
  virtual void read(const std::vector<std::filesystem::path>& inputs, RunTarget& target) const = 0;
};

// Every format gpuscope imports, in the order they are asked.
std::span<const Format* const> formats();

// The format that recognises `path`, or nullptr (a run database, a folder of them, or nothing
// gpuscope reads).
const Format* format_of(const std::filesystem::path& path);

}  // namespace gpuscope::ingest
