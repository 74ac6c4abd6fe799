// The JSON answers of the Prometheus HTTP API (and VictoriaMetrics' /api/v1/export lines) turned
// into series. Pure functions over text, so that tests and the fuzz target feed them by hand.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tsdb/series.hpp"

namespace gpuscope::tsdb {

// The answer was not what the API answers (not JSON, or JSON of another shape): `what` says
// what was wrong, for the client's message.
struct AnswerShapeError {
  std::string what;
};

// A query's answer (/api/v1/query, /api/v1/query_range) with status "success".
struct QueryAnswer {
  std::string result_type;  // "matrix", "vector", "scalar" or "string"
  std::vector<Series> series;
  std::vector<std::string> warnings;  // the answer's own, and VictoriaMetrics' isPartial said
};

// An answer with status "error".
struct ApiError {
  std::string type;     // errorType: "bad_data", "execution", "timeout", "422", ...
  std::string message;  // error: the server's words
};

// A sample value as the API writes it: a string ("1.5", "NaN", "+Inf", "-Inf") or a number.
// Throws AnswerShapeError for anything else.
double sample_value(const nlohmann::json& value);

// A sample time as the API writes it (Unix seconds, a number with up to 3 decimals, or a string)
// in milliseconds. Throws AnswerShapeError for anything else.
std::int64_t sample_time_ms(const nlohmann::json& time);

// The document of an answer: parsed JSON with a "status". Throws AnswerShapeError when the text
// is not JSON or has no status.
nlohmann::json answer_document(std::string_view body);

// The error of an answer with status "error"; nullopt for "success".
std::optional<ApiError> answer_error(const nlohmann::json& doc);

// The data of a query's successful answer. Throws AnswerShapeError.
QueryAnswer query_answer(const nlohmann::json& doc);

// The label sets of a /api/v1/series answer. Throws AnswerShapeError.
std::vector<Labels> series_answer(const nlohmann::json& doc);

// What the server warned about in an answer (warnings, isPartial).
std::vector<std::string> answer_warnings(const nlohmann::json& doc);

// One line of VictoriaMetrics' /api/v1/export: {"metric":{...},"values":[...],"timestamps":[...]}
// (values are bare JSON numbers, and NaN, +Inf and -Inf bare words). Throws AnswerShapeError.
Series export_line(std::string_view line);

// Whether an API error is a limit of the server's (points per series, samples per query) that
// a smaller piece of the same query could stay under.
bool is_limit_error(const ApiError& error);

// The first `max_chars` of a query on one line, "…" where cut, for messages.
std::string shortened(std::string_view query, std::size_t max_chars = 120);

}  // namespace gpuscope::tsdb
