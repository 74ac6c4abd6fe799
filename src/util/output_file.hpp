// Output files written safely: what a path names before anything replaces it, whether two paths
// are one file, where a file is made before it replaces its target (StagedFile: a private folder
// beside it, so no writer, ours or a library's, ever opens a name someone else could plant), and
// the one atomic writer (AtomicFile: staged, fsync, rename, fsync of the folder). Knows nothing
// of gpuscope: errors are std::error_code (core/output_file turns them into gpuscope's messages).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

namespace gpuscope::util {

// What a path names. Symbolic links are followed: the file a link points to is what gets
// replaced (the link stays), and a link that points nowhere is `broken_link`.
enum class PathKind {
  Absent,
  Regular,
  Directory,
  CharacterDevice,
  BlockDevice,
  Fifo,
  Socket,
  BrokenLink,
  Other,
};

// The kind of `path`; `absent` when nothing is there. `error` is set when it cannot be told
// (e.g. a name too long, a folder that cannot be searched).
PathKind path_kind(const std::filesystem::path& path, std::error_code& error);

// "character device", "FIFO", ... for messages.
const char* kind_name(PathKind kind);

// Whether `name` means standard output: "-" or /dev/stdout.
bool is_stdout_name(const std::filesystem::path& name);

// Whether `a` and `b` are the same file (device and inode, links followed), however spelled.
// False when either does not exist.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);
// The file's (device, inode), nullopt when it cannot be stat()ed: two paths name the same file
// when their identities are equal (same_file), e.g. to list thousands of inputs once each.
std::optional<std::pair<std::uint64_t, std::uint64_t>> file_identity(
    const std::filesystem::path& path);

// Writes all of `size` bytes to `fd`, retrying short writes and EINTR.
std::error_code write_all(int fd, const void* data, std::size_t size);

class TemporaryFolder;

// The one place a file is made before it replaces `target`: a private folder beside the target,
// ".<name>.gpuscope-tmp-XXXXXX" (mkdtemp: mode 0700, a name nobody can predict or make first,
// on the target's file system so the rename into place is atomic), holding the file under the
// target's own name. Any writer may then create it there, even one that follows symbolic links
// (PLplot's fopen, SQLite): no one else can put anything in that folder. commit() flushes the
// file to disk, renames it over the target and syncs the target's folder; the folder goes, with
// whatever is left in it, when the object does, and when SIGINT, SIGTERM, SIGHUP or SIGQUIT
// ends the process (TemporaryFolder). A crash (kill -9) leaves the folder, recognisably ours.
class StagedFile {
 public:
  explicit StagedFile(std::filesystem::path target);  // makes nothing yet
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  // Makes the private folder; path() is then where to write.
  std::error_code create();
  const std::filesystem::path& path() const { return path_; }
  const std::filesystem::path& target() const { return target_; }
  // fsync the file, rename it onto the target, fsync the target's folder.
  std::error_code commit();
  // The rename and the folder's fsync only, for a writer that has synced the file itself.
  std::error_code move_into_place();

 private:
  std::filesystem::path target_;
  std::filesystem::path path_;
  std::unique_ptr<TemporaryFolder> folder_;
};

// A file written under its temporary name and renamed over the target by commit(), which
// first flushes it to disk; afterwards the folder is synced, so the new name survives a power
// loss. Until commit() the target is untouched; a writer that fails or is destroyed (an
// exception, a crash) leaves at most its temporary, which the destructor removes.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Creates the temporary (a StagedFile: in a private folder beside the target, then the file
  // exclusively, mode 0666 less the umask).
  std::error_code open();
  // Appends bytes to the temporary.
  std::error_code write(std::string_view bytes);
  // The temporary's descriptor, for writers that stream (-1 before open()).
  int fd() const { return fd_; }
  const std::filesystem::path& target() const { return target_; }
  // Where the file is written before commit() (empty before open()).
  const std::filesystem::path& temporary() const { return staged_.path(); }
  // fsync, close, rename onto the target, fsync the folder.
  std::error_code commit();

 private:
  std::filesystem::path target_;
  StagedFile staged_;
  int fd_ = -1;
};

// The end of AtomicFile::commit() for a file another library wrote in a private folder
// (StagedFile::commit, a job's kept summary): fsync it, rename it onto `target`, fsync the
// folder.
std::error_code commit_written_file(const std::filesystem::path& temporary,
                                    const std::filesystem::path& target);

// fsyncs the folder that holds `target`, so a rename into it survives a power loss; a folder
// that cannot be synced is left as it is.
void sync_folder_of(const std::filesystem::path& target);

// Writes `bytes` to `target` atomically (AtomicFile).
std::error_code write_file_atomically(const std::filesystem::path& target, std::string_view bytes);

}  // namespace gpuscope::util
