// How a SQLite failure reads to the user: one translation of SqliteError into gpuscope's Error.
#pragma once

#include <string>
#include <utility>

#include "core/error.hpp"
#include "store/sqlite.hpp"

namespace gpuscope::store {

// Runs `f`; a SqliteError it throws becomes Error(summary, SQLite's words, hint): how a SQLite
// failure reads to the user, written once instead of a try/catch at every call.
template <typename F>
decltype(auto) translate_sqlite_errors(const std::string& summary, const std::string& hint, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const SqliteError& e) {
    throw Error(summary, e.what(), hint);
  }
}

}  // namespace gpuscope::store
