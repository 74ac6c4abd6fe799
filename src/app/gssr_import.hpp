// gssr's data as gpuscope runs (docs/gssr.md): each gssr process becomes one run of a gpuscope
// run database (launcher "gssr", its job, step, process, host, label and command as the run's
// fields), with gssr's DCGM values converted to gpuscope's units. `gpuscope import` writes the
// database; analyze, report, merge and export take gssr inputs directly by importing them into
// a temporary file first.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/gssr.hpp"

namespace gpuscope::app {

// Whether `path` is gssr data: a profile folder or process file, or gssr's exported SQLite.
bool is_gssr_input(const std::filesystem::path& path);

struct GssrImport {
  std::size_t runs = 0;
  std::size_t gpus = 0;
  std::int64_t samples = 0;
  std::vector<std::string> notes;  // what was left out, and why
};

// Writes every gssr process of `inputs` as one run of a new run database at `output`. Throws
// Error for unreadable input (naming the file and what is wrong) or an output that cannot be
// written; nothing is left at `output` then.
GssrImport import_gssr(const std::vector<std::filesystem::path>& inputs,
                       const std::filesystem::path& output, bool overwrite);

// The problem every imported run carries: what gssr did not record, so that nothing is invented.
inline constexpr const char* kGssrNotRecorded =
    "imported from gssr, which records no power, energy, temperatures or clocks, and no clock of "
    "its own per sample: sample times are index x interval";

// Inputs for analyze, report, merge and export: gssr inputs imported into one temporary database
// (removed when this object goes), other inputs as they are.
class ResolvedInputs {
 public:
  explicit ResolvedInputs(const std::vector<std::string>& inputs);
  ~ResolvedInputs();
  ResolvedInputs(const ResolvedInputs&) = delete;
  ResolvedInputs& operator=(const ResolvedInputs&) = delete;

  const std::vector<std::string>& paths() const { return paths_; }
  bool any_gssr() const { return !temporary_.empty(); }

 private:
  std::vector<std::string> paths_;
  std::filesystem::path temporary_;  // a folder of our own, removed with what is in it
};

}  // namespace gpuscope::app
