// Run databases as an older gpuscope wrote them, made from a current one, for the tests of
// reading and migrating them. Plain SQLite, independent of gpuscope's store.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuscope::testing {

// What a file of schema 1.<minor> lacks next to the current one.
struct OlderSchema {
  std::optional<int> minor;         // nullopt: a file from before minor versions (no such meta row)
  std::vector<std::string> tables;  // tables it did not have
  std::vector<std::pair<std::string, std::string>> columns;  // (table, column) it did not have
};

// Makes the run database at `path` one that `older` describes: drops its tables and columns,
// sets (or removes) the minor version, and vacuums. Throws std::runtime_error on SQL errors.
void downgrade_schema(const std::string& path, const OlderSchema& older);

}  // namespace gpuscope::testing
