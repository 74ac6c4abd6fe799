// The four reads of tsdb::Client: series, raw samples (VictoriaMetrics' export streamed line by
// line; Prometheus' range selectors evaluated piece by piece), range queries cut under the
// points-per-series limit, and instant queries. All of them POST their form (long selectors
// never meet a URL length limit).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tsdb/answer.hpp"
#include "tsdb/client.hpp"
#include "tsdb/pieces.hpp"

namespace gpuscope::tsdb {
namespace {

// VictoriaMetrics' export, read as it arrives: whole lines parsed and joined, the rest kept.
struct ExportReader {
  SeriesJoiner* joiner = nullptr;
  // The cap of one answer, which a stream would otherwise pass: what it says when passed.
  std::size_t max_bytes = 0;
  std::string too_large;
  std::size_t bytes = 0;
  std::string pending;
  std::string unparsed;  // the start of a body that is not export lines (an error's words)
  std::string why;       // what the first line that did not parse lacked
  std::optional<Error> failure;

  void line(std::string_view text) {
    if (text.empty() || text == "\r") return;
    if (!unparsed.empty()) {
      if (unparsed.size() < 4096) unparsed.append(text).append("\n");
      return;
    }
    try {
      joiner->add(export_line(text));
    } catch (const AnswerShapeError& e) {
      why = e.what;
      unparsed.append(text.substr(0, 4096)).append("\n");
    }
  }

  bool take(std::string_view piece) {
    bytes += piece.size();
    if (bytes > max_bytes) {
      failure = Error(too_large, "the limit of one answer, which keeps gpuscope's memory bounded",
                      "ask for a shorter window or fewer series");
      return false;
    }
    pending.append(piece);
    std::size_t start = 0;
    try {
      for (auto end = pending.find('\n'); end != std::string::npos;
           start = end + 1, end = pending.find('\n', start)) {
        line(std::string_view(pending).substr(start, end - start));
      }
    } catch (const Error& e) {  // more than max_points
      failure = e;
      return false;
    }
    pending.erase(0, start);
    return true;
  }
};

// Only the samples within `window`, both ends, whatever the server sent: a sample past the
// window (a clock far ahead, a server's bug) is not the job's and would otherwise add to its
// energy and peaks.
std::vector<Series> keep_within(std::vector<Series> out, const Window& window) {
  for (auto& s : out) {
    std::erase_if(s.points, [&](const Point& p) { return !window.contains(p.t_ms); });
  }
  return out;
}

}  // namespace

std::vector<Labels> Client::series(const std::string& selector, const Window& window) {
  const auto doc = call("/api/v1/series",
                        {{"match[]", selector},
                         {"start", api_time(window.start_ms)},
                         {"end", api_time(window.end_ms)}},
                        selector);
  try {
    return series_answer(doc);
  } catch (const AnswerShapeError& e) {
    throw Error(fmt::format("{} answered /api/v1/series in an unknown shape", server_name()),
                server_words(e.what), "check the URL: is it a Prometheus-API server?");
  }
}

std::vector<Series> Client::raw(const std::string& selector, const Window& window,
                                std::size_t max_points) {
  if (window.end_ms < window.start_ms) return {};
  return keep_within(server().kind == ServerKind::VictoriaMetrics
                         ? raw_victoria_metrics(selector, window, max_points)
                         : raw_prometheus(selector, window, max_points),
                     window);
}

std::vector<Series> Client::raw_victoria_metrics(const std::string& selector, const Window& window,
                                                 std::size_t max_points) {
  SeriesJoiner joiner(max_points, fmt::format("`{}`", shortened(selector)));
  ExportReader reader;
  reader.joiner = &joiner;
  reader.max_bytes = options_.max_body;
  reader.too_large = fmt::format("{} answered /api/v1/export with more than {} MiB for {}",
                                 server_name(), options_.max_body >> 20, shortened(selector));
  http::Request request = request_for("/api/v1/export", {{"match[]", selector},
                                                         {"start", api_time(window.start_ms)},
                                                         {"end", api_time(window.end_ms)}});
  request.on_body = [&reader](std::string_view piece) { return reader.take(piece); };
  http::Response r;
  try {
    r = send(request, selector);
  } catch (const http::Failure&) {
    if (reader.failure) throw *reader.failure;
    throw;
  }
  if (r.status != 200) fail_status(r, "/api/v1/export", selector);
  reader.line(reader.pending);
  if (!reader.unparsed.empty()) {
    throw Error(fmt::format("{} answered /api/v1/export with something else than export lines",
                            server_name()),
                server_words(reader.why) + ": " + body_words(reader.unparsed),
                "check the URL: a proxy's login page or another service answers there");
  }
  return joiner.take();
}

std::vector<Series> Client::raw_prometheus(const std::string& selector, const Window& window,
                                           std::size_t max_points) {
  const std::size_t count = series(selector, window).size();
  if (count == 0) return {};
  // Each piece stays well under --query.max-samples, assuming samples as often as every second.
  const std::size_t target = std::min<std::size_t>(
      options_.raw_piece_samples, static_cast<std::size_t>(server_max_samples_ / 4));
  std::int64_t piece = raw_piece_ms(count, target, 1000, window.length_ms());
  SeriesJoiner joiner(max_points, fmt::format("`{}`", shortened(selector)));
  // Covered: samples up to `done` (inclusive). A range selector [t - piece, t] takes both ends
  // in Prometheus 2 and only the right one in 3: the joiner drops a boundary sample seen twice.
  std::int64_t done = window.start_ms - 1;
  while (done < window.end_ms) {
    const std::int64_t t = std::min(window.end_ms, done + piece);
    const std::string expr = fmt::format("{}[{}ms]", selector, t - done);
    QueryAnswer answer;
    try {
      answer = query_answer(call("/api/v1/query", {{"query", expr}, {"time", api_time(t)}}, expr));
    } catch (const LimitError& e) {
      if (piece <= 1000) throw Error(e.summary(), e.reason(), "narrow the selector");
      piece = std::max<std::int64_t>(1000, piece / 4);
      continue;
    } catch (const AnswerShapeError& e) {
      throw Error(fmt::format("{} answered a query in an unknown shape", server_name()),
                  server_words(e.what), "check the URL: is it a Prometheus-API server?");
    }
    const std::size_t before = joiner.points();
    for (auto& s : answer.series) joiner.add(std::move(s), window.start_ms);
    piece = next_raw_piece_ms(piece, joiner.points() - before, target);
    done = t;
  }
  return joiner.take();
}

std::vector<Series> Client::range_piece(const std::string& expr, const Window& piece,
                                        std::int64_t step_ms, int depth) {
  try {
    return query_answer(call("/api/v1/query_range",
                             {{"query", expr},
                              {"start", api_time(piece.start_ms)},
                              {"end", api_time(piece.end_ms)},
                              {"step", api_time(step_ms)}},
                             expr))
        .series;
  } catch (const LimitError& e) {
    const std::int64_t points = points_in(piece, step_ms);
    if (points <= 1 || depth >= options_.max_splits) {
      throw Error(
          e.summary(), e.reason(),
          fmt::format("still refused in pieces of {} points: use a longer step, a "
                      "narrower query, or raise",
                      points) +
              std::string(
                  " the server's limit (Prometheus --query.max-samples, "
                  "VictoriaMetrics -search.maxPointsPerTimeseries / -search.maxSamplesPerQuery)"));
    }
    std::vector<Series> out;
    for (const Window& half : split_range(piece, step_ms, (points + 1) / 2)) {
      for (auto& s : range_piece(expr, half, step_ms, depth + 1)) out.push_back(std::move(s));
    }
    return out;
  } catch (const AnswerShapeError& e) {
    throw Error(fmt::format("{} answered a range query in an unknown shape", server_name()),
                server_words(e.what), "check the URL: is it a Prometheus-API server?");
  }
}

std::vector<Series> Client::range(const std::string& expr, const Window& window,
                                  std::int64_t step_ms) {
  if (step_ms <= 0) {
    throw Error(fmt::format("a range query of `{}` with a step of {} ms", shortened(expr), step_ms),
                "the step must be positive", "this is a bug of the caller");
  }
  SeriesJoiner joiner(SIZE_MAX, fmt::format("`{}`", shortened(expr)));
  for (const Window& piece : split_range(window, step_ms, range_piece_points())) {
    for (auto& s : range_piece(expr, piece, step_ms, 0)) joiner.add(std::move(s));
  }
  return keep_within(joiner.take(), window);
}

std::vector<Series> Client::instant(const std::string& expr, std::int64_t time_ms) {
  try {
    return query_answer(call("/api/v1/query", {{"query", expr}, {"time", api_time(time_ms)}}, expr))
        .series;
  } catch (const AnswerShapeError& e) {
    throw Error(fmt::format("{} answered a query in an unknown shape", server_name()),
                server_words(e.what), "check the URL: is it a Prometheus-API server?");
  }
}

}  // namespace gpuscope::tsdb
