#include "ingest/tools/nsys_export.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <system_error>

#include "core/error.hpp"
#include "store/foreign_sqlite.hpp"

namespace gpuscope::ingest {
namespace {

namespace fs = std::filesystem;
using kernels::KernelReport;
using kernels::memcpy_operation;
using kernels::NameColumn;
using store::ForeignDatabase;
using store::ForeignRows;
using store::ForeignSqliteError;

constexpr const char* kKernelTable = "CUPTI_ACTIVITY_KIND_KERNEL";
constexpr const char* kMemcpyTable = "CUPTI_ACTIVITY_KIND_MEMCPY";
constexpr const char* kMemsetTable = "CUPTI_ACTIVITY_KIND_MEMSET";

const char* const kExportHint =
    "pass the SQLite export of an Nsight Systems report: 'nsys export --type sqlite "
    "REPORT.nsys-rep' "
    "(or 'nsys profile --export sqlite ...')";

bool looks_like_nsys(const std::set<std::string>& tables) {
  for (const std::string& t : tables) {
    if (t == "StringIds" || t == "TARGET_INFO_GPU" || t == "META_DATA_EXPORT" ||
        t.rfind("CUPTI_ACTIVITY_KIND_", 0) == 0 || t.rfind("ENUM_", 0) == 0 || t == "NVTX_EVENTS") {
      return true;
    }
  }
  return false;
}

// Resolves name values (StringIds ids, or text in exports that store the name inline).
class Names {
 public:
  Names(const ForeignDatabase& db, bool has_string_ids) {
    if (has_string_ids) lookup_.emplace(db.query("SELECT value FROM StringIds WHERE id = ?1"));
  }
  std::string resolve(std::int64_t id) {
    if (lookup_) {
      lookup_->reset();
      lookup_->bind(1, id);
      if (lookup_->next() && !lookup_->is_null(0)) return lookup_->text(0);
    }
    return fmt::format("<string {}>", id);
  }

 private:
  std::optional<ForeignRows> lookup_;
};

void read_kernels(const ForeignDatabase& db, const std::set<std::string>& tables, NameColumn choice,
                  KernelReport& out) {
  const std::set<std::string> columns = db.columns(kKernelTable);
  if (!columns.contains("start") || !columns.contains("end")) {
    throw Error::usage(
        fmt::format("{}: table {} has no start/end columns", out.file.string(), kKernelTable),
        "not a schema gpuscope knows", kExportHint);
  }
  // Preferred name columns, newest schema first; shortName falls back to the demangled name.
  std::vector<std::string> candidates = {"demangledName", "name", "mangledName"};
  if (choice == NameColumn::ShortName) candidates.insert(candidates.begin(), "shortName");
  std::string column;
  for (const std::string& c : candidates) {
    if (columns.contains(c)) {
      column = c;
      break;
    }
  }
  if (column.empty()) {
    throw Error::usage(
        fmt::format("{}: table {} has no kernel name column (demangledName or shortName)",
                    out.file.string(), kKernelTable),
        "not a schema gpuscope knows", kExportHint);
  }
  if (choice == NameColumn::ShortName && column != "shortName") {
    out.notes.push_back(
        fmt::format("{}: no shortName column; kernels are named by {}", out.file.string(), column));
  }
  if (choice == NameColumn::Demangled && column != "demangledName") {
    out.notes.push_back(fmt::format("{}: no demangledName column; kernels are named by {}",
                                    out.file.string(), column));
  }

  ForeignRows stmt =
      db.query(fmt::format("SELECT {0}, typeof({0}), \"end\" - start FROM {1} "
                           "WHERE start IS NOT NULL AND \"end\" IS NOT NULL",
                           "\"" + column + "\"", kKernelTable));
  std::map<std::int64_t, std::vector<std::int64_t>> by_id;
  while (stmt.next()) {
    const std::int64_t duration = std::max<std::int64_t>(0, stmt.int64(2));
    const std::string type = stmt.text(1);
    if (type == "integer") {
      by_id[stmt.int64(0)].push_back(duration);
    } else {
      out.kernels[type == "null" ? std::string("<unnamed>") : stmt.text(0)].push_back(duration);
    }
  }
  Names names(db, tables.contains("StringIds"));
  for (auto& [id, durations] : by_id) {
    auto& target = out.kernels[names.resolve(id)];
    target.insert(target.end(), durations.begin(), durations.end());
  }
}

// Labels of ENUM_CUDA_MEMCPY_OPER when the export has it ("Host-to-Device"...).
std::map<std::int64_t, std::string> memcpy_labels(const ForeignDatabase& db,
                                                  const std::set<std::string>& tables) {
  std::map<std::int64_t, std::string> labels;
  if (!tables.contains("ENUM_CUDA_MEMCPY_OPER")) return labels;
  const std::set<std::string> columns = db.columns("ENUM_CUDA_MEMCPY_OPER");
  if (!columns.contains("id") || !columns.contains("label")) return labels;
  ForeignRows stmt = db.query("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER");
  while (stmt.next()) {
    if (!stmt.is_null(1)) labels[stmt.int64(0)] = "[CUDA memcpy " + stmt.text(1) + "]";
  }
  return labels;
}

void read_memory(const ForeignDatabase& db, const std::set<std::string>& tables,
                 KernelReport& out) {
  if (tables.contains(kMemcpyTable)) {
    const std::set<std::string> columns = db.columns(kMemcpyTable);
    if (columns.contains("start") && columns.contains("end")) {
      const std::map<std::int64_t, std::string> labels = memcpy_labels(db, tables);
      const std::string kind = columns.contains("copyKind") ? "copyKind" : "NULL";
      const std::string bytes = columns.contains("bytes") ? "bytes" : "0";
      ForeignRows stmt = db.query(fmt::format(
          "SELECT {}, {}, \"end\" - start FROM {} WHERE start IS NOT NULL AND \"end\" IS NOT NULL",
          kind, bytes, kMemcpyTable));
      while (stmt.next()) {
        std::string operation = "[CUDA memcpy]";
        if (!stmt.is_null(0)) {
          const std::int64_t k = stmt.int64(0);
          const auto label = labels.find(k);
          operation = label != labels.end() ? label->second : memcpy_operation(k);
        }
        out.memory[operation].push_back(
            {std::max<std::int64_t>(0, stmt.int64(2)), std::max<std::int64_t>(0, stmt.int64(1))});
      }
    }
  }
  if (tables.contains(kMemsetTable)) {
    const std::set<std::string> columns = db.columns(kMemsetTable);
    if (columns.contains("start") && columns.contains("end")) {
      const std::string bytes = columns.contains("bytes") ? "bytes" : "0";
      ForeignRows stmt = db.query(fmt::format(
          "SELECT {}, \"end\" - start FROM {} WHERE start IS NOT NULL AND \"end\" IS NOT NULL",
          bytes, kMemsetTable));
      while (stmt.next()) {
        out.memory["[CUDA memset]"].push_back(
            {std::max<std::int64_t>(0, stmt.int64(1)), std::max<std::int64_t>(0, stmt.int64(0))});
      }
    }
  }
}

}  // namespace

KernelReport read_nsys_export(const fs::path& file, NameColumn names) {
  KernelReport out;
  out.file = file;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    throw Error::usage(fmt::format("cannot read {}", file.string()),
                       fs::exists(file, ec) ? "not a regular file" : "no such file", kExportHint);
  }
  const bool nsys_rep = file.extension() == ".nsys-rep" || file.extension() == ".qdrep";
  try {
    const ForeignDatabase db(file);
    const std::set<std::string> tables = db.tables();
    if (!looks_like_nsys(tables)) {
      throw Error::usage(
          fmt::format("{} is not an Nsight Systems export", file.string()),
          tables.empty() ? "an empty SQLite database" : "an SQLite database without nsys tables",
          kExportHint);
    }
    out.has_kernel_table = tables.contains(kKernelTable);
    if (out.has_kernel_table) read_kernels(db, tables, names, out);
    if (out.kernels.empty())
      out.notes.push_back(fmt::format("{}: no kernels recorded", file.string()));
    read_memory(db, tables, out);
  } catch (const ForeignSqliteError& e) {
    if (nsys_rep) {
      throw Error::usage(fmt::format("{} is an nsys report, not its SQLite export", file.string()),
                         e.what(),
                         fmt::format("run 'nsys export --type sqlite {}' and pass the .sqlite file",
                                     file.string()));
    }
    throw Error::usage(fmt::format("cannot read {} as an SQLite database", file.string()), e.what(),
                       kExportHint);
  }
  return out;
}

}  // namespace gpuscope::ingest
