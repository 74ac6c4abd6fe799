// The JSON answers of the Prometheus HTTP API (and VictoriaMetrics' /api/v1/export lines) turned
// into series. Pure functions over text, so that tests and the fuzz target feed them by hand.
#pragma once

#include <cstddef>
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

// How deep an answer (or an export line) may nest: the API's deepest is 6 (the answer, its
// data, the result, a series, its values, a sample). Deeper is refused before it costs anything.
constexpr std::size_t kMaxAnswerDepth = 32;

// What gpuscope keeps of an answer, read by a streaming (SAX) parse: its status, error and
// warnings, and its data as series or label sets built directly, never as a JSON document
// (which costs ~20 times the answer's size). What the data's shape says is checked by
// query_answer and series_answer, which know which of the API's answers was asked.
struct Answer {
  enum class Kind { Absent, Object, Array, Other };
  std::string status;
  std::optional<std::string> error_type;
  std::optional<std::string> error;
  std::vector<std::string> warnings;
  bool partial = false;
  Kind data = Kind::Absent;
  std::optional<std::string> result_type;
  Kind result = Kind::Absent;
  bool result_type_not_string = false;
  // data.result's objects as series, with what each held (kValues: a "values" list, kValue: a
  // "value" pair).
  std::vector<Series> series;
  std::vector<unsigned char> held;
  static constexpr unsigned char kValues = 1, kValue = 2;
  bool result_non_object = false;           // an item of data.result was no object
  std::vector<std::string> result_scalars;  // its first bare items (a scalar's pair), as JSON
  std::size_t result_items = 0;
  std::vector<Labels> label_sets;      // data's objects (/api/v1/series)
  std::optional<std::string> problem;  // the first thing in data that is not the API's shape
};

// The answer in `body`, parsed as it is read. Throws AnswerShapeError when the text is not JSON,
// nests deeper than kMaxAnswerDepth, or has no status.
Answer answer_document(std::string_view body);

// The error of an answer with status "error"; nullopt for "success".
std::optional<ApiError> answer_error(const Answer& doc);

// The data of a query's successful answer. Throws AnswerShapeError.
QueryAnswer query_answer(Answer doc);

// The label sets of a /api/v1/series answer. Throws AnswerShapeError.
std::vector<Labels> series_answer(Answer doc);

// What the server warned about in an answer (warnings, isPartial).
std::vector<std::string> answer_warnings(const Answer& doc);

// One line of VictoriaMetrics' /api/v1/export: {"metric":{...},"values":[...],"timestamps":[...]}
// (values are bare JSON numbers, and NaN, +Inf and -Inf bare words), parsed as it is read (no JSON
// document). Throws AnswerShapeError, also past kMaxAnswerDepth.
Series export_line(std::string_view line);

// Whether an API error is a limit of the server's (points per series, samples per query) that
// a smaller piece of the same query could stay under.
bool is_limit_error(const ApiError& error);

// The first `max_chars` of a query on one line, "…" where cut, for messages.
std::string shortened(std::string_view query, std::size_t max_chars = 120);

}  // namespace gpuscope::tsdb
