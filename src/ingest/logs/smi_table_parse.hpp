// The lines of nvidia-smi's human table (`nvidia-smi`, `nvidia-smi -l 5 > gpu.log`, `watch
// nvidia-smi`; docs/logs.md): its date line, the banner, one block of 2 or 3 rows per GPU in the
// layout of drivers up to about 470 (79 columns) or 525 and later (89 columns), and the rows of the
// process table, with or without its GI/CI columns. Pure functions over one line or block: what a
// line is, and its values; the reader (smi_table_format) puts them together.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/logs/local_time.hpp"

namespace gpuscope::ingest::smi_table {

// `line` without terminal escapes (ESC [ ... final byte, ESC and one character: what `watch`
// and `script` leave) and without blanks at either end; a view of `line` when it has no escape,
// else of `scratch`.
std::string_view clean_line(std::string_view line, std::string& scratch);

// "Wed Nov 25 22:40:11 2026" (C's ctime, nvidia-smi's first line) as a local time; nullopt when
// `text` is not one, or its weekday is not its date's.
std::optional<LocalDateTime> parse_date_line(std::string_view text);

// `watch`'s header "Every 5.0s: nvidia-smi      node1: Wed Nov 25 22:40:11 2026": its host
// (empty when the header has none); nullopt when `text` is no such header.
std::optional<std::string> parse_watch_header(std::string_view text);

// A rule of the table: '+', '-', '=' and '|' only ("+---+", "|===|").
bool is_rule(std::string_view text);

// The cells of a table row "| a | b |" (without the blanks around each); false when `text` does
// not begin and end with '|'.
bool split_row(std::string_view text, std::vector<std::string_view>& cells);

struct Banner {
  std::string smi_version;     // "580.159.04"
  std::string driver_version;  // "580.159.04"
  std::string cuda_version;    // "13.0"; empty for "N/A"
};

// The banner "NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0" (one cell);
// nullopt when `cell` is not one.
std::optional<Banner> parse_banner(std::string_view cell);

// One value of the table: a number with its unit, or the word nvidia-smi printed for none
// (`absent`: "N/A", "ERR!", "Not Supported", ...).
struct Reading {
  std::optional<double> value;
  std::string absent;
};

// One GPU's block: its 2 rows (drivers before MIG) or 3 (the third: MIG mode).
struct GpuBlock {
  unsigned index = 0;
  std::string name;         // as shown; nvidia-smi cuts long names to "NVIDIA A100-SXM..."
  bool name_cut = false;    // the name ends in "..."
  std::string persistence;  // "On", "Off"; "WDDM"/"TCC" on Windows
  std::string bus_id;       // "00000000:07:00.0"
  std::string display_active;
  Reading ecc_uncorrected;  // "Volatile Uncorr. ECC": a count, or N/A, Off
  Reading fan_pct;
  Reading temperature_c;
  std::string perf;  // "P0"
  Reading power_w;
  Reading power_cap_w;
  Reading memory_used_mib;
  Reading memory_total_mib;
  Reading gpu_util_pct;
  std::string compute_mode;  // "Default", "E. Process", ...
  std::string mig_mode;      // "Enabled", "Disabled", "N/A"; empty: a 2-row block
};

// The block of one GPU from its rows (each the cells of one row, 3 cells each); nullopt with
// the reason in `why` when they are not a GPU's block.
std::optional<GpuBlock> parse_gpu_block(const std::vector<std::vector<std::string>>& rows,
                                        std::string& why);

struct ProcessRow {
  unsigned gpu = 0;
  std::optional<unsigned> gi, ci;  // MIG GPU and compute instance; nullopt: N/A or no column
  unsigned pid = 0;
  std::string type;  // "C", "G", "C+G", "M", ...
  std::string name;  // as shown; nvidia-smi cuts long paths to "...envs/py/bin/python"
  Reading memory_mib;
};

// A row of the process table (its one cell); `gi_ci`: the header has GI and CI columns. nullopt
// with the reason in `why` when it is not one.
std::optional<ProcessRow> parse_process_row(std::string_view cell, bool gi_ci, std::string& why);

}  // namespace gpuscope::ingest::smi_table
