// The grid's intensity over a job from a live source (--carbon-source uk|electricitymaps): the
// options checked, the token found, the series fetched over the job's span (and the day after,
// where the source forecasts it) and kept where the caller says, so a later analysis is the same
// and works offline. A source that cannot answer is a note and the yearly average, named as
// such: never a silent zero (docs/analysis.md §8).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "carbon/uk_grid.hpp"
#include "core/grid_intensity.hpp"

namespace gpuscope::carbon {

// What the user asked for, checked.
struct GridRequest {
  bool uk = true;        // else Electricity Maps
  UkArea area;           // the UK area, or the Electricity Maps zone as area.name
  std::string token;     // Electricity Maps' (never printed or stored)
  std::string base_url;  // --carbon-url, else GPUSCOPE_CARBON_URL; empty: the source's own
  bool refetch = false;  // --carbon-refetch: ignore what was kept

  // "uk:North Scotland", "electricitymaps:DE": the key under which a series is kept.
  std::string key() const;
  // "the UK Carbon Intensity API", "Electricity Maps": the source in messages.
  std::string source_name() const;
};

// The options of a live source as the command line gives them.
struct GridOptions {
  std::string source;  // --carbon-source
  std::string region;  // --carbon-region ("" national)
  std::optional<std::string> token_file;
  std::string base_url;
  bool refetch = false;
  bool with_series_file = false;  // --carbon-series was given too
  bool with_intensity = false;    // --carbon-intensity was given too
};

// Checks the options and finds the token, before anything is read. Throws Error::usage naming
// what is wrong (an unknown source, a combination that cannot be, no zone, no token).
GridRequest grid_request(const GridOptions& options, const std::string& env_token);

// Where fetched series are kept between analyses (the run database, for gpuscope).
class GridCache {
 public:
  virtual ~GridCache() = default;
  virtual std::optional<IntensitySeries> load(const std::string& key) = 0;
  // Keeps `series`; throws Error when it cannot (then the caller fetches it again next time).
  virtual void save(const std::string& key, const IntensitySeries& series,
                    std::int64_t fetched_wall_ns) = 0;
  virtual std::string where() const = 0;  // "run.db", for notes
};

// The series covering [start, end) (wall ns): kept in `cache` when it covers the span (unless
// refetch), else fetched and kept. nullopt when the source could not answer or had no figures,
// with a note saying so; a usage error of the source (exit code 2) is thrown.
std::optional<IntensitySeries> grid_series(const GridRequest& request, std::int64_t start_wall_ns,
                                           std::int64_t end_wall_ns, GridCache& cache,
                                           std::vector<std::string>& notes);

// The UK regions, one a line, with the API's current forecast for each when it answers
// (`base_url` empty: the API's own), for --carbon-region list.
std::string uk_region_list(const std::string& base_url);

}  // namespace gpuscope::carbon
