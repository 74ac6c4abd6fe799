// Writes small SQLite files with the schema of Nsight Systems exports, in the variants the
// reader must handle (docs/kernels.md). The numbers are the ones the tests compute by hand.
#pragma once

#include <string>

#include "store/sqlite.hpp"

namespace gpuscope::testing {

enum class NsysSchema {
  Current,  // StringIds, demangledName + shortName, ENUM_CUDA_MEMCPY_OPER, MEMCPY, MEMSET
  Legacy,   // no shortName column, no ENUM tables, no MEMSET table
};

// Kernels: gemm 100, 200, 600 ns; relu 300, 500 ns; reduce 50 ns (current and legacy).
// Memory (current): HtoD 1000 ns/4000 B and 3000 ns/8000 B, DtoH 500 ns/2000 B, memset 200 ns/
// 1000000 B. Legacy: HtoD only. `extra_gemm_ns` > 0 adds one more gemm launch.
inline void write_nsys_export(const std::string& path, NsysSchema schema, int extra_gemm_ns = 0) {
  store::Database db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const bool current = schema == NsysSchema::Current;
  db.exec(
      "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
      "INSERT INTO StringIds VALUES (1, 'void gemm<float>(int, float const*)'), (2, 'gemm'),"
      " (3, 'relu_kernel(float*)'), (4, 'relu_kernel'), (5, 'reduce(float const*)'),"
      " (6, 'reduce');"
      "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);"
      "INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100');");
  if (current) {
    db.exec(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " deviceId INTEGER, contextId INTEGER, streamId INTEGER, correlationId INTEGER,"
        " globalPid INTEGER, demangledName INTEGER, shortName INTEGER, mangledName INTEGER,"
        " gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER,"
        " blockZ INTEGER);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, demangledName, shortName)"
        " VALUES (1000, 1100, 0, 1, 2), (2000, 2200, 0, 1, 2), (3000, 3600, 0, 1, 2),"
        " (4000, 4300, 0, 3, 4), (5000, 5500, 0, 3, 4), (6000, 6050, 0, 5, 6);"
        "CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
        "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (1, 'CUDA_MEMCPY_OPER_HTOD', 'Host-to-Device'),"
        " (2, 'CUDA_MEMCPY_OPER_DTOH', 'Device-to-Host');"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " deviceId INTEGER, streamId INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,"
        " srcKind INTEGER, dstKind INTEGER);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, bytes, copyKind) VALUES"
        " (100, 1100, 4000, 1), (7000, 10000, 8000, 1), (11000, 11500, 2000, 2);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " deviceId INTEGER, bytes INTEGER NOT NULL, value INTEGER);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, bytes, value) VALUES"
        " (50, 250, 1000000, 0);");
  } else {
    db.exec(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " deviceId INTEGER, streamId INTEGER, demangledName INTEGER NOT NULL);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, demangledName) VALUES"
        " (1000, 1100, 1), (2000, 2200, 1), (3000, 3600, 1), (4000, 4300, 3), (5000, 5500, 3),"
        " (6000, 6050, 5);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (100, 1100, 4000, 1);");
  }
  if (extra_gemm_ns > 0) {
    db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, demangledName) VALUES (9000, " +
            std::to_string(9000 + extra_gemm_ns) + ", 1);");
  }
}

// Runs `sql` in a new SQLite file at `path` (for the non-nsys and empty-table cases).
inline void write_sqlite(const std::string& path, const std::string& sql) {
  store::Database db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  db.exec(sql);
}

}  // namespace gpuscope::testing
