#include "core/output_check.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>

#include "core/error.hpp"

namespace gpuscope {
namespace fs = std::filesystem;

namespace {

std::string hint_for(std::error_code error, std::string_view option) {
  const std::string choose = "choose another place with " + std::string(option);
  if (error == std::errc::filename_too_long)
    return "use a shorter name with " + std::string(option);
  if (error == std::errc::read_only_file_system) return "the file system is read-only; " + choose;
  if (error == std::errc::permission_denied || error == std::errc::operation_not_permitted) {
    return "you may not write there; " + choose;
  }
  if (error == std::errc::no_space_on_device) return "free some space, or " + choose;
  return choose;
}

}  // namespace

void throw_write_error(const fs::path& path, std::error_code error) {
  throw Error("cannot write " + path.string(), error.message(), hint_for(error, "-o"));
}

fs::path check_output_file(const fs::path& path, const OutputCheck& check) {
  const std::string option(check.option);
  const std::string name = path.string();
  if (path.empty()) throw Error::usage("no output file", "", "name one with " + option);
  if (util::is_stdout_name(path)) {
    if (!check.stdout_allowed) {
      throw Error::usage(name + " cannot be standard output", "this format is not a stream",
                         "name a file with " + option);
    }
    return "-";
  }
  std::error_code error;
  util::PathKind kind = util::path_kind(path, error);
  // A folder on the way that is a file is reported by the folder's creation below.
  if (error == std::errc::not_a_directory) {
    error.clear();
    kind = util::PathKind::Absent;
  }
  if (error) {
    throw Error::usage("cannot use " + name + " as " + option, error.message(),
                       hint_for(error, option));
  }
  if (kind == util::PathKind::Directory) {
    throw Error::usage(name + " is a directory", "", "name a file with " + option);
  }
  if (kind != util::PathKind::Absent && kind != util::PathKind::Regular) {
    throw Error::usage(
        name + " is a " + util::kind_name(kind) + ", not a regular file",
        "gpuscope only ever replaces regular files",
        "name a file with " + option + (check.stdout_allowed ? " (or - for standard output)" : ""));
  }
  for (const auto& input : check.inputs) {
    if (util::same_file(path, input)) {
      throw Error::usage(name + " is also an input (" + input.string() + ")",
                         "writing it would destroy what is being read",
                         "choose another name with " + option);
    }
  }
  if (kind == util::PathKind::Regular && !check.force) {
    throw Error::usage(name + " exists", "",
                       option == "-o" ? std::string("use -f/--force-overwrite to replace it")
                                      : "use -f/--force-overwrite to replace it, or choose another "
                                        "name with " +
                                            option);
  }
  // A link is followed: its target is replaced, the link stays.
  fs::path target = path;
  std::error_code not_a_link;  // set for a path that does not exist yet: not an error here
  if (fs::is_symlink(path, not_a_link)) {
    target = fs::canonical(path, error);
    if (error)
      throw Error::usage("cannot resolve " + name, error.message(), hint_for(error, option));
  }
  fs::path folder = target.parent_path();
  if (folder.empty()) folder = ".";
  fs::create_directories(folder, error);
  if (error) {
    throw Error::usage("cannot create directory " + folder.string(), error.message(),
                       hint_for(error, option));
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    const std::error_code denied(errno, std::generic_category());
    throw Error::usage("cannot write to the folder " + folder.string(), denied.message(),
                       hint_for(denied, option));
  }
  // The name itself must be usable there (a component past NAME_MAX).
  if (target.filename().string().size() + 32 > 255) {
    throw Error::usage("cannot write " + name,
                       std::make_error_code(std::errc::filename_too_long).message(),
                       hint_for(std::make_error_code(std::errc::filename_too_long), option));
  }
  return target;
}

void open_output_file(util::AtomicFile& file) {
  if (auto error = file.open()) throw_write_error(file.target(), error);
}

void commit_output_file(util::AtomicFile& file) {
  if (auto error = file.commit()) throw_write_error(file.target(), error);
}

void write_output_file(const fs::path& path, std::string_view text) {
  if (path == "-") {
    if (auto error = util::write_all(STDOUT_FILENO, text.data(), text.size())) {
      throw Error("cannot write to standard output", error.message());
    }
    return;
  }
  if (auto error = util::write_file_atomically(path, text)) throw_write_error(path, error);
}

}  // namespace gpuscope
