// The one way foreign data enters gpuscope (ARCHITECTURE.md, "The ingest layer"): a reader per
// format recognises its inputs and writes what they hold as runs of a run database through the
// RunWriter (RunTarget); every command then reads run databases. A format invents nothing: what
// it lacks is absent (NULL), and said once as a note and a problem on its runs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/run_target.hpp"

namespace gpuscope::ingest {

// What the user says about inputs that cannot say it themselves (docs/logs.md): the same for
// every command that reads foreign inputs (analyze, report, import, merge, export).
struct ReadOptions {
  // --input-format: read every input that is not a run database as this format (a Format's name),
  // for content no format recognises; empty: each input's format from its content.
  std::string format;
  // --query-gpu: the fields of an nvidia-smi CSV written with `noheader`, as given to
  // nvidia-smi's --query-gpu (comma-separated).
  std::string query_gpu;
  // --timezone: the zone of a log's local timestamps ("Europe/Zurich", "UTC", "+02:00");
  // empty: this machine's zone (said in a note).
  std::string timezone;
  // --log-gpus: GPUs per sampling tick of a log without a GPU column.
  std::optional<unsigned> gpus;
  // --log-interval: seconds between a log's ticks where the log has no timestamps.
  std::optional<double> interval_s;
  // --log-start: the local time ("2026-11-25 22:40:11", in --timezone's zone) of the first
  // tick of a log without dates; empty: its end taken as the file's modification time.
  std::string start;
};

class Format {
 public:
  virtual ~Format() = default;
  // Its name in messages ("gssr"): "X is not gssr data".
  virtual std::string_view name() const = 0;
  // What its inputs are, for messages and help: "gssr profile folders (...), process files ...".
  virtual std::string_view inputs() const = 0;
  // Whether `path` is an input of this format: from its name, or a cheap look inside; never
  // throws (an unreadable path is not recognised).
  virtual bool recognises(const std::filesystem::path& path, const ReadOptions& options) const = 0;
  // Writes what `inputs` (each recognised by this format, or given to it by --input-format) hold as
  // runs of `target`. Throws Error naming the input (and line) and what is wrong with it.
  virtual void read(const std::vector<std::filesystem::path>& inputs, const ReadOptions& options,
                    RunTarget& target) const = 0;
};

// Every format gpuscope imports, in the order they are asked.
std::span<const Format* const> formats();

// The format named `name` ("nvidia-smi-csv"), or nullptr.
const Format* format_named(std::string_view name);

// The format that reads `path`: the one --input-format names for a file that is not a run database,
// else the one that recognises it; nullptr for a run database, a folder of them, or nothing
// gpuscope reads. Throws Error::usage for an --input-format no format has.
const Format* format_of(const std::filesystem::path& path, const ReadOptions& options);

}  // namespace gpuscope::ingest
