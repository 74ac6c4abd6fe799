#include "tsdb/answer.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace gpuscope::tsdb {
namespace {

using nlohmann::json;

[[noreturn]] void shape(std::string what) {
  throw AnswerShapeError{std::move(what)};
}

// A JSON value for a message: a string in quotes, a number or word as JSON writes it, and only
// the kind of an array or object (nlohmann's dump() recurses: a deep nesting would overflow
// the stack, a large one fill the message). At most 200 characters.
std::string brief(const json& value) {
  std::string out = value.is_string()   ? '"' + value.get<std::string>() + '"'
                    : value.is_array()  ? "(an array)"
                    : value.is_object() ? "(an object)"
                                        : value.dump();
  if (out.size() > 200) out = out.substr(0, 200) + "…";
  return out;
}

std::optional<double> number_in(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text == "Inf" || text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-Inf" || text == "-inf") return -std::numeric_limits<double>::infinity();
  if (text == "NaN" || text == "nan") return std::numeric_limits<double>::quiet_NaN();
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

Point point_of(const json& pair) {
  if (!pair.is_array() || pair.size() != 2) shape("a sample is not a [time, \"value\"] pair");
  return Point{sample_time_ms(pair[0]), sample_value(pair[1])};
}

}  // namespace

double sample_value(const json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    if (const auto number = number_in(value.get_ref<const std::string&>())) return *number;
    shape(fmt::format("sample value {} is not a number", brief(value)));
  }
  shape(fmt::format("sample value {} is neither a number nor a string", brief(value)));
}

std::int64_t sample_time_ms(const json& time) {
  double seconds = 0;
  if (time.is_number()) {
    seconds = time.get<double>();
  } else if (time.is_string()) {
    const auto number = number_in(time.get_ref<const std::string&>());
    if (!number) shape(fmt::format("sample time {} is not a number", brief(time)));
    seconds = *number;
  } else {
    shape(fmt::format("sample time {} is not a number", brief(time)));
  }
  if (!std::isfinite(seconds)) shape(fmt::format("sample time {} is not finite", brief(time)));
  // Past 2262 the nanoseconds gpuscope keeps leave an int64: such a time is refused here, not
  // multiplied and wrapped back into the years of the job (584 years late lands inside it).
  if (std::abs(seconds) > static_cast<double>(kMaxTimeMs) / 1000.0) {
    shape(
        fmt::format("sample time {} s is past 2262-04-11, beyond what gpuscope's nanosecond "
                    "times hold",
                    brief(time)));
  }
  return std::llround(seconds * 1000.0);
}

std::optional<ApiError> answer_error(const Answer& doc) {
  if (doc.status == "success") return std::nullopt;
  ApiError error;
  error.type = doc.error_type.value_or("");
  error.message = doc.error.value_or("");
  if (error.message.empty()) error.message = "status " + doc.status;
  return error;
}

namespace {

// A matrix's or vector's series, each checked to hold what the result type says.
std::vector<Series> series_of(Answer& doc, bool matrix) {
  if (doc.result_non_object) {
    shape(matrix ? "a matrix series is not an object" : "a vector sample is not an object");
  }
  if (doc.problem) shape(*doc.problem);
  for (std::size_t i = 0; i < doc.series.size(); ++i) {
    if (matrix && (doc.held[i] & Answer::kValues) == 0) shape("a matrix series has no \"values\"");
    if (!matrix && (doc.held[i] & Answer::kValue) == 0) shape("a vector sample has no \"value\"");
    if (!matrix && doc.series[i].points.size() != 1) shape("a vector sample has no \"value\"");
  }
  return std::move(doc.series);
}

// A scalar's [time, "value"] pair, from the result's bare items.
Point scalar_of(const Answer& doc) {
  if (doc.result != Answer::Kind::Array || doc.result_items != 2 || doc.result_non_object) {
    shape("a sample is not a [time, \"value\"] pair");
  }
  json pair = json::array();
  for (const auto& item : doc.result_scalars) pair.push_back(json::parse(item));
  return point_of(pair);
}

}  // namespace

QueryAnswer query_answer(Answer doc) {
  if (doc.data != Answer::Kind::Object) shape("the answer has no \"data\" object");
  QueryAnswer answer;
  if (doc.result_type_not_string) shape("the answer's \"resultType\" is not a string");
  if (doc.result_type) answer.result_type = *doc.result_type;
  if (doc.result == Answer::Kind::Absent) shape("the answer's data has no \"result\"");
  const bool list = doc.result == Answer::Kind::Array;
  if (answer.result_type == "matrix" && list) {
    answer.series = series_of(doc, true);
  } else if (answer.result_type == "vector" && list) {
    answer.series = series_of(doc, false);
  } else if (answer.result_type == "scalar") {
    answer.series.push_back(Series{{}, {scalar_of(doc)}});
  } else if (answer.result_type != "string") {
    shape(
        fmt::format("the answer's result type \"{}\" is not one of the API's", answer.result_type));
  }
  answer.warnings = answer_warnings(doc);
  return answer;
}

std::vector<Labels> series_answer(Answer doc) {
  if (doc.data != Answer::Kind::Array) shape("the answer has no \"data\" list");
  if (doc.problem) shape(*doc.problem);
  return std::move(doc.label_sets);
}

std::vector<std::string> answer_warnings(const Answer& doc) {
  std::vector<std::string> out = doc.warnings;
  if (doc.partial) {
    out.emplace_back(
        "the answer is partial (isPartial): some of the server's storage nodes did not answer");
  }
  return out;
}

bool is_limit_error(const ApiError& error) {
  for (const std::string_view words :
       {"maximum resolution", "too many points", "maxPointsPerTimeseries", "too many samples",
        "maxSamplesPerQuery", "maxSamplesPerSeries", "max-samples", "too long query",
        "maxQueryLen"}) {
    if (error.message.find(words) != std::string::npos) return true;
  }
  return false;
}

std::string shortened(std::string_view query, std::size_t max_chars) {
  std::string out(query.substr(0, max_chars));
  for (char& ch : out) {
    if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
  }
  if (query.size() > max_chars) out += "…";
  return out;
}

}  // namespace gpuscope::tsdb
