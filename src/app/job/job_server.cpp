#include "app/job/job_server.hpp"

#include "tsdb/client.hpp"
#include "tsdb/site.hpp"
#include "util/environment.hpp"

namespace gpuscope::app {

std::unique_ptr<tsdb::Source> open_job_server(const std::optional<std::string>& url,
                                              const std::optional<std::string>& config_file) {
  const util::EnvLookup process = util::process_environment();
  // --config FILE stands for GPUSCOPE_CONFIG.
  const util::EnvLookup env = [&](const std::string& name) -> std::optional<std::string> {
    if (name == "GPUSCOPE_CONFIG" && config_file) return config_file;
    return process(name);
  };
  const tsdb::Site site = tsdb::find_site(url, env, "--prometheus");
  return std::make_unique<tsdb::Client>(tsdb::client_options(site));
}

}  // namespace gpuscope::app
