// NVML events: Xids and ECC errors as the driver reports them, one per wait.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "nvml/device.hpp"

namespace gpuscope::nvml {

// One delivered event: its nvmlEventType* bit and data (the Xid for XidCriticalError, else 0).
struct Event {
  nvmlDevice_t device = nullptr;
  std::uint64_t type = 0;
  std::uint64_t data = 0;
  std::optional<unsigned> gpu_instance_id;  // set only when MIG attributes the event
  std::optional<unsigned> compute_instance_id;
};

// An nvmlEventSet_t owned for its lifetime (freed with nvmlEventSetFree).
class EventSet {
 public:
  static Expected<EventSet> create(std::shared_ptr<const Library> library);
  EventSet(EventSet&& other) noexcept;
  EventSet& operator=(EventSet&& other) noexcept;
  EventSet(const EventSet&) = delete;
  EventSet& operator=(const EventSet&) = delete;
  ~EventSet();

  // Registers `device` for the event types in `mask`. NOT_SUPPORTED: none of them is registered,
  // and the set stays usable.
  Status register_events(const Device& device, std::uint64_t mask);
  // The next event, waiting at most timeout_ms (0: only what is queued); nullopt on NVML's
  // TIMEOUT, which also covers an interrupted wait.
  Expected<std::optional<Event>> wait(unsigned timeout_ms);

 private:
  EventSet(std::shared_ptr<const Library> library, nvmlEventSet_t set)
      : library_(std::move(library)), set_(set) {}
  void free();
  std::shared_ptr<const Library> library_;
  nvmlEventSet_t set_{nullptr};
};

}  // namespace gpuscope::nvml
