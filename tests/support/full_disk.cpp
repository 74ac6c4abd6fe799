#include "support/full_disk.hpp"

#include <sqlite3.h>

#include <atomic>

namespace gpuscope::testing {
namespace {

std::atomic<bool> g_full{false};
sqlite3_vfs* g_real = nullptr;  // SQLite's default VFS, which does the work
sqlite3_vfs g_vfs{};
sqlite3_io_methods g_methods{};

// Our file: SQLite's file of the real VFS lies right behind it (szOsFile says so).
struct WrappedFile {
  sqlite3_file base;
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};

sqlite3_file* real_of(sqlite3_file* file) {
  return reinterpret_cast<WrappedFile*>(file)->real();
}

// Each of the file's methods, passed on to the real file; writes fail while the disk is full.
template <auto Member, typename... Args>
int forward(sqlite3_file* file, Args... args) {
  sqlite3_file* real = real_of(file);
  return (real->pMethods->*Member)(real, args...);
}

int write_file(sqlite3_file* file, const void* data, int amount, sqlite3_int64 offset) {
  if (g_full) return SQLITE_FULL;
  return forward<&sqlite3_io_methods::xWrite>(file, data, amount, offset);
}

void shm_barrier(sqlite3_file* file) {
  sqlite3_file* real = real_of(file);
  real->pMethods->xShmBarrier(real);
}

int open_file(sqlite3_vfs*, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  auto* wrapped = reinterpret_cast<WrappedFile*>(file);
  wrapped->base.pMethods = nullptr;
  const int rc = g_real->xOpen(g_real, name, wrapped->real(), flags, out_flags);
  // A file whose real methods are set is closed by SQLite even when the open failed.
  if (wrapped->real()->pMethods != nullptr) wrapped->base.pMethods = &g_methods;
  return rc;
}

void make_methods() {
  using M = sqlite3_io_methods;
  g_methods.iVersion = 3;
  g_methods.xClose = forward<&M::xClose>;
  g_methods.xRead = forward<&M::xRead, void*, int, sqlite3_int64>;
  g_methods.xWrite = write_file;
  g_methods.xTruncate = forward<&M::xTruncate, sqlite3_int64>;
  g_methods.xSync = forward<&M::xSync, int>;
  g_methods.xFileSize = forward<&M::xFileSize, sqlite3_int64*>;
  g_methods.xLock = forward<&M::xLock, int>;
  g_methods.xUnlock = forward<&M::xUnlock, int>;
  g_methods.xCheckReservedLock = forward<&M::xCheckReservedLock, int*>;
  g_methods.xFileControl = forward<&M::xFileControl, int, void*>;
  g_methods.xSectorSize = forward<&M::xSectorSize>;
  g_methods.xDeviceCharacteristics = forward<&M::xDeviceCharacteristics>;
  g_methods.xShmMap = forward<&M::xShmMap, int, int, int, void volatile**>;
  g_methods.xShmLock = forward<&M::xShmLock, int, int, int>;
  g_methods.xShmBarrier = shm_barrier;
  g_methods.xShmUnmap = forward<&M::xShmUnmap, int>;
  g_methods.xFetch = forward<&M::xFetch, sqlite3_int64, int, void**>;
  g_methods.xUnfetch = forward<&M::xUnfetch, sqlite3_int64, void*>;
}

}  // namespace

FullDisk::FullDisk() {
  g_real = sqlite3_vfs_find(nullptr);
  g_vfs = *g_real;  // the rest of the VFS (time, randomness, dlopen) is the default's
  g_vfs.pNext = nullptr;
  g_vfs.zName = "gpuscope-test-full-disk";
  g_vfs.szOsFile = static_cast<int>(sizeof(WrappedFile)) + g_real->szOsFile;
  g_vfs.xOpen = open_file;
  g_vfs.xDelete = [](sqlite3_vfs*, const char* name, int sync) {
    return g_real->xDelete(g_real, name, sync);
  };
  g_vfs.xAccess = [](sqlite3_vfs*, const char* name, int flags, int* result) {
    return g_real->xAccess(g_real, name, flags, result);
  };
  g_vfs.xFullPathname = [](sqlite3_vfs*, const char* name, int size, char* out) {
    return g_real->xFullPathname(g_real, name, size, out);
  };
  make_methods();
  g_full = false;
  sqlite3_vfs_register(&g_vfs, 1);
}

FullDisk::~FullDisk() {
  sqlite3_vfs_unregister(&g_vfs);
  g_full = false;
}

void FullDisk::fill() {
  g_full = true;
}

void FullDisk::free_space() {
  g_full = false;
}

}  // namespace gpuscope::testing
