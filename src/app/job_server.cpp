#include "app/job_server.hpp"

#include "core/error.hpp"

namespace gpuscope::app {

std::unique_ptr<tsdb::Source> open_job_server(const std::optional<std::string>&,
                                              const std::optional<std::string>&) {
  throw Error("WIP");
}

}  // namespace gpuscope::app
