// What the accounting database's two files share (accounting_db.cpp writes, accounting_read.cpp
// reads): the connection and its path.
#pragma once

#include <filesystem>

#include "store/accounting_db.hpp"
#include "store/sqlite.hpp"

namespace gpuscope::store {

struct AccountingDb::Impl {
  std::filesystem::path path;
  Database db;
  Impl(std::filesystem::path p, int flags) : path(std::move(p)), db(path, flags) {}
};

// The jobs table's columns as read back into a SiteJob (accounting_read.cpp).
SiteJob job_of_row(Statement& s);

}  // namespace gpuscope::store
