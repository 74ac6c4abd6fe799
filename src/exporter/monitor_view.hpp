// `gpuscope monitor`'s views of a Snapshot: a terminal table (one row per GPU) and JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "exporter/latest_values.hpp"

namespace gpuscope::exporter {

// The table, one line per GPU after a header line; every line ends in '\n'. Absent values show
// as "-" (missing is not zero).
std::string monitor_table(const Snapshot& snapshot);

// {"time": ISO 8601, "gpus": [{"gpu": 0, "uuid": ..., "name": ..., "<catalog metric>": value or
// null, ..., "energy_since_start_j": ..., "memory_total_bytes": ..., "clock_event_reasons_text":
// ...}]}.
nlohmann::json monitor_json(const Snapshot& snapshot);

// Short words for the clock-event (throttle) reasons that matter under load: "power cap",
// "thermal", "HW slowdown", ...; "idle" when only the idle bit is set; "-" for none.
std::string short_clock_reasons(std::uint64_t reasons);

// Redraws a multi-line frame in place on a terminal without flicker: the cursor goes back to the
// frame's first line and each line is overwritten and cleared to its end, all in one write.
class InPlaceFrame {
 public:
  // The escape sequences to turn `frame` into what is on screen; "" the first time.
  std::string redraw(const std::string& frame);

 private:
  std::size_t lines_ = 0;
};

}  // namespace gpuscope::exporter
