// Foreign inputs into run databases: `gpuscope import` writes one the user keeps; analyze,
// report, merge and export read foreign inputs through a temporary one (RunInputs). Run
// databases and folders of them are expanded here too, so that every command resolves its
// inputs in one place.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ingest/format.hpp"
#include "ingest/run_target.hpp"

namespace gpuscope::util {
class TemporaryFolder;
}

namespace gpuscope::ingest {

// Writes every input (each of a format gpuscope imports; several formats may be mixed) as runs
// of a new run database at `output`. Throws Error::usage naming an input no format recognises,
// Error for unreadable input (naming the file and what is wrong) or an output that cannot be
// written; nothing is left at `output` then.
ImportSummary import_inputs(const std::vector<std::filesystem::path>& inputs,
                            const std::filesystem::path& output, bool overwrite,
                            const ReadOptions& options = {});

// The run databases a command reads: inputs of a foreign format imported into a temporary run
// database per format (in a private folder removed when this object goes, or when a signal ends
// the process), run databases and folders of them as they are.
class RunInputs {
 public:
  explicit RunInputs(const std::vector<std::string>& inputs, const ReadOptions& options = {});
  ~RunInputs();
  RunInputs(RunInputs&&) noexcept;
  RunInputs& operator=(RunInputs&&) noexcept;

  // Every input as a run database or a folder of them, in the order given (imported ones last).
  const std::vector<std::string>& paths() const { return paths_; }
  // What the imports left out, and why.
  const std::vector<std::string>& notes() const { return notes_; }
  // How a path of paths() is shown to the user: an imported input's own name ("gpu.csv", "a.log
  // and 3 more"), not the temporary database it became (gone when the command ends); any other
  // path as it is.
  std::string shown_as(const std::string& path) const;

 private:
  std::vector<std::string> paths_;
  std::vector<std::string> notes_;
  std::map<std::string, std::string> shown_;  // imported database → its inputs' name
  std::unique_ptr<util::TemporaryFolder> temporary_;
};

// Every run database `inputs` name: files as given, folders as their *.db files in name order,
// each file once (a file named twice, by two spellings, a link, a folder and a file in it).
// Throws Error::usage for an input that does not exist or a folder without .db files. Inputs
// named more than once are said in `notes`.
std::vector<std::filesystem::path> expand_run_databases(const std::vector<std::string>& inputs,
                                                        std::vector<std::string>& notes);

// `paths` with each file once (named twice, by two spellings, a link: counting it twice would
// double the job's energy); what was left out is said in `notes`.
std::vector<std::filesystem::path> each_file_once(const std::vector<std::filesystem::path>& paths,
                                                  std::vector<std::string>& notes);

// The files `inputs` name (folders with their *.db files), for the check that no output
// overwrites an input (core/output_check.hpp). Never throws: missing inputs are reported later.
std::vector<std::filesystem::path> named_input_files(const std::vector<std::string>& inputs);

}  // namespace gpuscope::ingest
