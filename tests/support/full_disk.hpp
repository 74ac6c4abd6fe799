// A full disk for SQLite, in the test alone: while a FullDisk lives, every database the process
// opens goes through a VFS wrapped around SQLite's default one, whose writes fail with SQLITE_FULL
// ("database or disk is full") while the disk is full, as a real full disk's do. Nothing of it is
// in gpuscope's code: the writer meets the same error it would meet on a real disk.
//
// Declare it before the databases it fills (it must outlive every connection opened through it).
#pragma once

namespace gpuscope::testing {

class FullDisk {
 public:
  // Registers the VFS as the default; the disk starts with room.
  FullDisk();
  // Unregisters it; the default VFS is SQLite's own again.
  ~FullDisk();
  FullDisk(const FullDisk&) = delete;
  FullDisk& operator=(const FullDisk&) = delete;

  // From now on, every write of a database file, its journal or its write-ahead log fails
  // (the shared-memory index, which lives in memory, does not).
  void fill();
  // Space comes back: writes succeed again.
  void free_space();
};

}  // namespace gpuscope::testing
