#include "nvml/events.hpp"

#include <utility>

namespace gpuscope::nvml {

Expected<EventSet> EventSet::create(std::shared_ptr<const Library> library) {
  nvmlEventSet_t set{nullptr};
  auto status = library->call(&FunctionTable::EventSetCreate, &set);
  if (!status) return tl::unexpected(status.error());
  return EventSet(std::move(library), set);
}

EventSet::EventSet(EventSet&& other) noexcept
    : library_(std::move(other.library_)), set_(std::exchange(other.set_, {nullptr})) {}

EventSet& EventSet::operator=(EventSet&& other) noexcept {
  if (this != &other) {
    free();
    library_ = std::move(other.library_);
    set_ = std::exchange(other.set_, {nullptr});
  }
  return *this;
}

EventSet::~EventSet() {
  free();
}

void EventSet::free() {
  // Nothing useful can be done if freeing fails at teardown.
  if (set_.handle != nullptr) (void)library_->call(&FunctionTable::EventSetFree, set_);
  set_.handle = nullptr;
}

Status EventSet::register_events(const Device& device, std::uint64_t mask) {
  return library_->call(&FunctionTable::DeviceRegisterEvents, device.handle(),
                        static_cast<unsigned long long>(mask), set_);
}

Expected<std::optional<Event>> EventSet::wait(unsigned timeout_ms) {
  nvmlEventData_t data{};
  auto status = library_->call(&FunctionTable::EventSetWait, set_, &data, timeout_ms);
  if (!status) {
    if (status.error().code == kErrorTimeout) return std::optional<Event>{};
    return tl::unexpected(status.error());
  }
  const auto instance = [](unsigned id) {
    return id == kEventNoInstanceId ? std::nullopt : std::optional<unsigned>(id);
  };
  return std::optional<Event>(Event{data.device, data.eventType, data.eventData,
                                    instance(data.gpuInstanceId),
                                    instance(data.computeInstanceId)});
}

}  // namespace gpuscope::nvml
