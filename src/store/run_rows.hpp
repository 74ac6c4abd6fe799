// The runs and devices tables row by row: writing a run's start, devices and end, and reading
// them back. Columns are addressed by name so the order in schema.cpp can change freely.
#pragma once

#include <cstdint>
#include <vector>

#include "core/device_description.hpp"
#include "core/run.hpp"
#include "store/records.hpp"
#include "store/sqlite.hpp"

namespace gpuscope::store {

// Inserts the run with status 'running' and returns its run_id.
std::int64_t insert_run(Database& db, const RunInfo& run);

// Inserts one devices row per description.
void insert_devices(Database& db, std::int64_t run_id,
                    const std::vector<DeviceDescription>& devices);

// Records how the run ended (status, exit, end times, counters, problems).
void update_run_end(Database& db, std::int64_t run_id, const RunEnd& end);

// "SELECT run_id, <every runs column> FROM runs" (the caller appends WHERE/ORDER BY).
std::string select_runs_sql(Database& db);
StoredRun read_run(const Statement& row);

// "SELECT run_id, <every devices column> FROM devices".
std::string select_devices_sql(Database& db);
DeviceDescription read_device(const Statement& row);

}  // namespace gpuscope::store
