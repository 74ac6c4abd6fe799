// The kinds of Event (core/run.hpp), spelled once: an enum for code to compare, the word stored
// in the events table (docs/database.md) beside each. A word this gpuscope does not know (a newer
// one wrote the file) reads as Other and keeps its word, so it is still shown as it was stored.
#pragma once

#include <array>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "core/stored_word.hpp"

namespace gpuscope {

struct EventKindWords {
  enum Value {
    JobStart,       // the job was spawned
    JobExit,        // how it ended
    JobStop,        // the job was stopped (SIGSTOP, SIGTSTP, ...)
    JobContinue,    // and continued
    Signal,         // a signal gpuscope received or forwarded
    MaxRuntime,     // --max-runtime stopped the job
    ClockEvents,    // the GPU's clock-event reasons changed
    GpuLost,        // the GPU fell off the bus
    Gap,            // sampling missed its deadlines
    WriteError,     // the run database could not be written
    MetricsSource,  // a metric source (DCGM) lost or regained its counters or its connection
    Xid,            // the driver reported an Xid error (detail "Xid 48: Double Bit ECC Error")
    Ecc,            // ECC errors appeared (the driver's ECC event, or the counters rose)
    RowRemap,       // memory rows were remapped, or a remap is pending or failed
    PcieReplays,    // the PCIe replay counter rose
    NvlinkErrors,   // an NVLink error counter rose
    MigInstance,    // a MIG device went or appeared, or a GPU's MIG mode changed (docs/mig.md)
    NodeEnergy,     // the node's energy could not be read (docs/node-energy.md)
    CounterReset,   // a GPU's counter went back (an AMD energy accumulator after a reset)
    Other,          // a word this gpuscope does not know
  };

  static constexpr std::array<std::pair<Value, std::string_view>, 19> kWords = {{
      {JobStart, "job_start"},
      {JobExit, "job_exit"},
      {JobStop, "job_stop"},
      {JobContinue, "job_continue"},
      {Signal, "signal"},
      {MaxRuntime, "max_runtime"},
      {ClockEvents, "clock_events"},
      {GpuLost, "gpu_lost"},
      {Gap, "gap"},
      {WriteError, "write_error"},
      {MetricsSource, "metrics_source"},
      {Xid, "xid"},
      {Ecc, "ecc"},
      {RowRemap, "row_remap"},
      {PcieReplays, "pcie_replays"},
      {NvlinkErrors, "nvlink_errors"},
      {MigInstance, "mig_instance"},
      {NodeEnergy, "node_energy"},
      {CounterReset, "counter_reset"},
  }};
};
using EventKind = StoredWord<EventKindWords>;

}  // namespace gpuscope
