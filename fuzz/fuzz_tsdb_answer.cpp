// libFuzzer target: what a Prometheus-API server answers (tsdb/answer), which gpuscope does not
// control (a proxy, a Thanos or Mimir in front, another server speaking the API, a version that
// changed): the JSON of /api/v1/query and /api/v1/query_range, of /api/v1/series and
// VictoriaMetrics' /api/v1/export lines; and the site's configuration file (tsdb/site), which
// people write. The first byte picks the reader. A bad answer is an AnswerShapeError (a bad file
// a gpuscope::Error), never another exception or a crash; what is read holds what the answer
// said: a vector or scalar one sample per series, an export line as many samples as timestamps,
// an API error a message for the user, a site file a URL.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "fuzz_file.hpp"
#include "tsdb/answer.hpp"
#include "tsdb/site.hpp"

using gpuscope::fuzz::require;

namespace {

using namespace gpuscope;

void query(std::string_view body) {
  const tsdb::Answer doc = tsdb::answer_document(body);
  if (const auto error = tsdb::answer_error(doc)) {
    require(!error->message.empty());
    (void)tsdb::is_limit_error(*error);
    (void)tsdb::shortened(error->message);
    return;
  }
  const tsdb::QueryAnswer answer = tsdb::query_answer(doc);
  if (answer.result_type == "vector" || answer.result_type == "scalar") {
    for (const auto& s : answer.series) require(s.points.size() == 1);
  }
  if (answer.result_type == "string") require(answer.series.empty());
  require(answer.warnings.size() == tsdb::answer_warnings(doc).size());
}

void series(std::string_view body) {
  const tsdb::Answer doc = tsdb::answer_document(body);
  if (tsdb::answer_error(doc)) return;
  for (const auto& labels : tsdb::series_answer(doc)) (void)labels.size();
}

void export_lines(std::string_view body) {
  while (!body.empty()) {
    const std::size_t end = body.find('\n');
    const std::string_view line = body.substr(0, end);
    body = end == std::string_view::npos ? std::string_view() : body.substr(end + 1);
    try {
      const tsdb::Series s = tsdb::export_line(line);
      for (std::size_t i = 1; i < s.points.size(); ++i)
        (void)(s.points[i].t_ms - s.points[i - 1].t_ms);
    } catch (const tsdb::AnswerShapeError& e) {
      require(!e.what.empty());
    }
  }
}

void site(std::string_view body) {
  try {
    const tsdb::Site s = tsdb::parse_site_file(std::string(body), "/etc/gpuscope/prometheus.conf");
    if (s.timeout) require(s.timeout->count() >= 0);
  } catch (const Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 4) {
      case 0:
        query(body);
        break;
      case 1:
        series(body);
        break;
      case 2:
        export_lines(body);
        break;
      default:
        site(body);
        break;
    }
  } catch (const tsdb::AnswerShapeError& e) {
    require(!e.what.empty());
  }
  return 0;
}
