// The grid intensity a run was analysed with (schema 1.4; docs/database.md, "grid_intensity"):
// what `analyze`/`report` fetched from a grid API, kept in the run database so a later analysis
// of the same run is reproducible and offline. Keyed by the request ("uk:South England").
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "core/grid_intensity.hpp"

namespace gpuscope::store {

class Database;

// The DDL of grid_intensity and its index (create_schema, and migrate() from 1.3).
std::string create_grid_tables_sql();

// The series stored for `request` in `path`, when there is one. Never throws for a file without
// the table (an older schema): nullopt.
std::optional<IntensitySeries> load_grid_series(const std::filesystem::path& path,
                                                const std::string& request);

// Replaces what `path` holds for `request` with `series`, fetched at `fetched_wall_ns`
// (upgrading an older file's schema first). Throws Error naming the file when it cannot.
void save_grid_series(const std::filesystem::path& path, const std::string& request,
                      const IntensitySeries& series, std::int64_t fetched_wall_ns);

}  // namespace gpuscope::store
