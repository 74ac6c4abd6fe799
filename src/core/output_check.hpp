// gpuscope's rules for the files its commands write (docs/cli.md, "Output files"), on top of
// util/output_file: only a regular file is ever replaced, never one of the command's inputs, and
// a missing folder is created. Every refusal is one Error::usage (exit code 2) naming the file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "util/output_file.hpp"

namespace gpuscope {

struct OutputCheck {
  bool force = false;                         // -f/--force-overwrite: replace a regular file
  bool stdout_allowed = false;                // "-" and /dev/stdout mean standard output
  std::vector<std::filesystem::path> inputs;  // files the command reads: never written
  std::string_view option = "-o";             // how the user named it, for messages
};

// Checks `path` before the command does any work and returns what to write: the path itself,
// the file a symbolic link points to (the link stays), or "-" for standard output. Creates
// missing parent folders. Throws Error::usage when the path is a directory, a device, FIFO or
// socket, a broken link, exists without force, is one of the inputs, or cannot be written.
std::filesystem::path check_output_file(const std::filesystem::path& path,
                                        const OutputCheck& check);

// Writes `text` to `path` (a checked path, or "-") atomically; throws Error naming the file.
void write_output_file(const std::filesystem::path& path, std::string_view text);

// Commits an AtomicFile; throws Error naming the target when it cannot.
void commit_output_file(util::AtomicFile& file);

// Opens an AtomicFile; throws Error naming the target when it cannot.
void open_output_file(util::AtomicFile& file);

// The message for an error writing `path`: what happened and what to do.
[[noreturn]] void throw_write_error(const std::filesystem::path& path, std::error_code error);

}  // namespace gpuscope
