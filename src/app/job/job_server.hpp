// The monitoring database `gpuscope job` reads: the server's URL and credentials from the
// command line, the environment or the site's configuration file (tsdb/site.hpp), opened as a
// tsdb::Source.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "tsdb/source.hpp"

namespace gpuscope::app {

std::unique_ptr<tsdb::Source> open_job_server(const std::optional<std::string>& url,
                                              const std::optional<std::string>& config_file);

}  // namespace gpuscope::app
