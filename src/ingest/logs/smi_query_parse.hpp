// The lines of nvidia-smi's detailed query (`nvidia-smi -q`, `nvidia-smi -q -l 5 > gpu.log`;
// docs/logs.md): "Key : Value" lines and sections nested by indentation, one section per GPU, and
// what each GPU's keys mean in gpuscope's columns, across the names drivers gave them (470's
// "Power Readings" and "Clocks Throttle Reasons", 530 and later's "GPU Power Readings" and "Clocks
// Event Reasons"). Pure functions; the reader (smi_query_format) puts a block together.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_description.hpp"
#include "core/health.hpp"
#include "core/run.hpp"

namespace gpuscope::ingest::smi_query {

// The line that begins each block.
inline constexpr std::string_view kBlockHeader = "==============NVSMI LOG==============";

// One line: its indentation (blanks before the key), its key and, after " : ", its value.
struct KeyLine {
  std::size_t indent = 0;
  std::string_view key;
  std::string_view value;
  bool has_value = false;  // "Key : Value" (a value may be empty); false: a section's name
};

// `line` (with its indentation, without its line end) as a key line; nullopt for a blank line.
std::optional<KeyLine> split_key_line(std::string_view line);

// "GPU 00000000:07:00.0", the line that begins a GPU's section: its bus id; nullopt when `text`
// is no such line.
std::optional<std::string> parse_gpu_line(std::string_view text);

// A process in a GPU's "Processes" section.
struct QueryProcess {
  std::size_t line = 0;  // where it began
  std::optional<unsigned> gi, ci;
  std::optional<unsigned> pid;
  std::string type;
  std::string name;
  std::string memory;  // "6491 MiB", "N/A"
  bool has_memory = false;
};

// What a GPU's section says: each key with a value at its path below the GPU ("FB Memory
// Usage/Used", "Clocks Event Reasons/HW Slowdown/HW Thermal Slowdown"), and its processes.
struct QueryGpu {
  std::string bus_id;    // from its "GPU ..." line
  std::size_t line = 0;  // that line
  struct Value {
    std::string text;
    std::size_t line = 0;
  };
  std::map<std::string, Value, std::less<>> values;
  std::vector<QueryProcess> processes;
  bool reached_processes = false;  // its "Processes" key was read (every driver prints it late)
  std::string last_top;            // its last key of the first level
};

// A GPU's readings at one block's time: its sample row and health row (device_index and wall_ns
// left to the caller) and, per field, the word printed for each value that was absent.
struct GpuReadings {
  SampleRow row;
  HealthRow health;
  std::vector<std::pair<std::string, std::string>> absent;  // field, word ("N/A")
};

// `gpu`'s values in gpuscope's columns; false with `why` and `line` for a value that cannot be
// read for sure (a number where a word is printed, another unit, a reason neither Active nor Not
// Active).
bool read_gpu(const QueryGpu& gpu, GpuReadings& out, std::string& why, std::size_t& line);

// `gpu`'s facts (name, UUID, bus id, memory, power limits, maximum clocks, MIG mode) into `d`;
// false with `why` and `line` as read_gpu.
bool describe_gpu(const QueryGpu& gpu, DeviceDescription& d, std::string& why, std::size_t& line);

// A process's memory in bytes; nullopt with the word printed ("N/A") in `absent`, or with `bad`
// set when it is no memory.
std::optional<double> process_memory(const QueryProcess& p, std::string& absent, bool& bad);

// The name a key nobody maps is said with in the "left out" note: its first-level section for a
// section gpuscope reads nothing of ("Fan Speed", "BAR1 Memory Usage"), its whole path in one it
// reads some of ("Temperature/GPU T.Limit Temp"); empty for a key gpuscope reads.
std::string left_out_name(std::string_view path);

}  // namespace gpuscope::ingest::smi_query
