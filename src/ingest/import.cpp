#include "ingest/import.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <system_error>

#include "core/error.hpp"
#include "ingest/format.hpp"
#include "ingest/logs/log_text.hpp"
#include "util/output_file.hpp"
#include "util/temporary_folder.hpp"

namespace gpuscope::ingest {
namespace {

namespace fs = std::filesystem;

// Why `input` is no run database either, from its first 4 KiB; "" when it may be one (SQLite's
// header, an empty or unreadable file, a folder).
std::string not_sqlite_why(const fs::path& input) {
  const std::string head = read_head(input, 4096);
  if (head.empty() || head.rfind(std::string_view("SQLite format 3\0", 16), 0) == 0) return {};
  const auto nul = head.find('\0');
  if (nul == std::string::npos) return "it is text, not SQLite";
  const auto line =
      1 + std::count(head.begin(), head.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
  return fmt::format(
      "it is no SQLite file, and it holds a NUL byte at line {} (byte {}), which no text log "
      "holds",
      line, nul + 1);
}

[[noreturn]] void not_importable(const fs::path& input, const std::string& why = {}) {
  std::string names, what;
  for (const Format* format : formats()) {
    names += (names.empty() ? "" : ", ") + std::string(format->name());
    what += fmt::format("; {}: {}", format->name(), format->inputs());
  }
  throw Error::usage(
      fmt::format("{} is no input gpuscope reads: not a SQLite database (a run database), nor "
                  "recognised as one of the formats it reads ({})",
                  input.string(), names),
      why,
      fmt::format("gpuscope reads run databases{}. Name the format of a log whose content it does "
                  "not recognise with --input-format NAME (one of {}; docs/logs.md)",
                  what, names));
}

// The inputs grouped by format, in the order formats are first met; nullopt for a path that is
// no foreign format.
std::vector<std::pair<const Format*, std::vector<fs::path>>> by_format(
    const std::vector<fs::path>& inputs, const ReadOptions& options,
    std::vector<std::string>* others) {
  std::vector<std::pair<const Format*, std::vector<fs::path>>> groups;
  for (const auto& input : inputs) {
    const Format* format = format_of(input, options);
    if (format == nullptr) {
      // A file that does not start as SQLite's do is no run database either (a text log with a
      // NUL byte included): say what gpuscope reads, not "no SQLite file".
      const std::string why = not_sqlite_why(input);
      if (others == nullptr || !why.empty()) not_importable(input, why);
      others->push_back(input.string());
      continue;
    }
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& group) { return group.first == format; });
    if (it == groups.end()) it = groups.insert(groups.end(), {format, {}});
    it->second.push_back(input);
  }
  return groups;
}

// A temporary database's name: after the format's first input, so that the run tables show where
// the runs came from ("profile_out_JobID_4242.db").
fs::path named_after(const fs::path& input, const fs::path& folder, std::string_view format) {
  fs::path name = input.lexically_normal();
  if (!name.has_filename()) name = name.parent_path();
  fs::path file = folder / (name.filename().string() + ".db");
  if (fs::exists(file)) file = folder / fmt::format("{}-{}.db", name.filename().string(), format);
  return file;
}

}  // namespace

ImportSummary import_inputs(const std::vector<fs::path>& inputs, const fs::path& output,
                            bool overwrite, const ReadOptions& options) {
  RunTarget target(output, overwrite);
  std::vector<std::string> names;
  for (const auto& [format, paths] : by_format(inputs, options, nullptr)) {
    format->read(paths, options, target);
    names.emplace_back(format->name());
  }
  ImportSummary summary = target.finish();
  summary.formats = std::move(names);
  return summary;
}

RunInputs::RunInputs(const std::vector<std::string>& inputs, const ReadOptions& options) {
  const std::vector<fs::path> given(inputs.begin(), inputs.end());
  const auto groups = by_format(given, options, &paths_);
  if (groups.empty()) return;
  try {
    temporary_ = std::make_unique<util::TemporaryFolder>("gpuscope-import-");
  } catch (const std::system_error& e) {
    throw Error("cannot make a folder for the imported data", e.what(),
                "set TMPDIR to a writable folder with room for it");
  }
  for (const auto& [format, paths] : groups) {
    const fs::path file = named_after(paths.front(), temporary_->path(), format->name());
    RunTarget target(file, true);
    format->read(paths, options, target);
    const ImportSummary summary = target.finish();
    notes_.insert(notes_.end(), summary.notes.begin(), summary.notes.end());
    paths_.push_back(file.string());
    shown_[file.string()] =
        paths.size() == 1 ? paths.front().string()
                          : fmt::format("{} and {} more", paths.front().string(), paths.size() - 1);
  }
}

std::string RunInputs::shown_as(const std::string& path) const {
  const auto it = shown_.find(path);
  return it == shown_.end() ? path : it->second;
}

RunInputs::~RunInputs() = default;
RunInputs::RunInputs(RunInputs&&) noexcept = default;
RunInputs& RunInputs::operator=(RunInputs&&) noexcept = default;

std::vector<fs::path> expand_run_databases(const std::vector<std::string>& inputs,
                                           std::vector<std::string>& notes) {
  std::vector<fs::path> files;
  for (const auto& input : inputs) {
    std::error_code error;
    if (fs::is_directory(input, error)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::directory_iterator(input, error)) {
        std::error_code kind;
        if (entry.path().extension() == ".db" && entry.is_regular_file(kind)) {
          found.push_back(entry.path());
        }
      }
      if (found.empty()) {
        throw Error::usage(fmt::format("{} holds no .db files", input), {},
                           "point at the directory gpuscope profile -o wrote");
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (!fs::exists(input, error)) {
      throw Error::usage(fmt::format("{} does not exist", input), {},
                         "check the path (gpuscope profile -o names the database)");
    } else {
      files.emplace_back(input);
    }
  }
  return each_file_once(files, notes);
}

std::vector<fs::path> each_file_once(const std::vector<fs::path>& paths,
                                     std::vector<std::string>& notes) {
  // Each file is stat()ed once: comparing every pair would take seconds over thousands of ranks.
  std::vector<fs::path> unique;
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
  for (const auto& file : paths) {
    const auto identity = util::file_identity(file);
    if (identity && !seen.insert(*identity).second) {
      notes.push_back(fmt::format("{} was named more than once; it is read once", file.string()));
      continue;
    }
    unique.push_back(file);
  }
  return unique;
}

std::vector<fs::path> named_input_files(const std::vector<std::string>& inputs) {
  std::vector<fs::path> files;
  for (const auto& input : inputs) {
    files.emplace_back(input);
    std::error_code error;
    if (!fs::is_directory(input, error)) continue;
    for (const auto& entry : fs::directory_iterator(input, error)) {
      if (entry.path().extension() == ".db") files.push_back(entry.path());
    }
  }
  return files;
}

}  // namespace gpuscope::ingest
