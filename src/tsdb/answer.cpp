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

Labels labels_of(const json& metric) {
  if (!metric.is_object()) shape("a series' \"metric\" is not an object");
  Labels labels;
  for (const auto& [key, value] : metric.items()) {
    if (!value.is_string()) shape(fmt::format("label {} is not a string", key));
    labels.emplace(key, value.get<std::string>());
  }
  return labels;
}

Point point_of(const json& pair) {
  if (!pair.is_array() || pair.size() != 2) shape("a sample is not a [time, \"value\"] pair");
  return Point{sample_time_ms(pair[0]), sample_value(pair[1])};
}

std::vector<Series> matrix_of(const json& result) {
  std::vector<Series> out;
  out.reserve(result.size());
  for (const auto& item : result) {
    if (!item.is_object()) shape("a matrix series is not an object");
    Series s;
    s.labels = labels_of(item.value("metric", json::object()));
    const auto values = item.find("values");
    if (values == item.end() || !values->is_array()) shape("a matrix series has no \"values\"");
    s.points.reserve(values->size());
    for (const auto& pair : *values) s.points.push_back(point_of(pair));
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<Series> vector_of(const json& result) {
  std::vector<Series> out;
  out.reserve(result.size());
  for (const auto& item : result) {
    if (!item.is_object()) shape("a vector sample is not an object");
    Series s;
    s.labels = labels_of(item.value("metric", json::object()));
    const auto value = item.find("value");
    if (value == item.end()) shape("a vector sample has no \"value\"");
    s.points.push_back(point_of(*value));
    out.push_back(std::move(s));
  }
  return out;
}

// NaN, Inf, +Inf and -Inf outside strings quoted, so that a JSON parser takes the line.
std::string quote_bare_words(std::string_view line) {
  std::string out;
  out.reserve(line.size() + 16);
  bool in_string = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (in_string) {
      out += ch;
      if (ch == '\\' && i + 1 < line.size()) {
        out += line[++i];
      } else if (ch == '"') {
        in_string = false;
      }
      continue;
    }
    if (ch == '"') in_string = true;
    bool quoted = false;
    for (const std::string_view word : {"+Inf", "-Inf", "Inf", "NaN"}) {
      if (line.substr(i, word.size()) == word) {
        out += '"';
        out += word;
        out += '"';
        i += word.size() - 1;
        quoted = true;
        break;
      }
    }
    if (!quoted) out += ch;
  }
  return out;
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

json answer_document(std::string_view body) {
  json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded()) shape("the answer is not JSON");
  if (!doc.is_object() || !doc.contains("status") || !doc["status"].is_string()) {
    shape("the answer is JSON without a \"status\"");
  }
  return doc;
}

std::optional<ApiError> answer_error(const json& doc) {
  if (!doc.is_object()) return ApiError{{}, "the answer is not a JSON object"};
  const auto status = doc.find("status");
  const std::string status_text = status == doc.end()   ? "?"
                                  : status->is_string() ? status->get<std::string>()
                                                        : brief(*status);
  if (status_text == "success") return std::nullopt;
  ApiError error;
  const auto type = doc.find("errorType");
  if (type != doc.end()) error.type = type->is_string() ? type->get<std::string>() : brief(*type);
  const auto message = doc.find("error");
  if (message != doc.end()) {
    error.message = message->is_string() ? message->get<std::string>() : brief(*message);
  }
  if (error.message.empty()) error.message = "status " + status_text;
  return error;
}

QueryAnswer query_answer(const json& doc) {
  const auto data = doc.find("data");
  if (data == doc.end() || !data->is_object()) shape("the answer has no \"data\" object");
  QueryAnswer answer;
  const auto type = data->find("resultType");
  if (type != data->end() && !type->is_string())
    shape("the answer's \"resultType\" is not a string");
  if (type != data->end()) answer.result_type = type->get<std::string>();
  const auto result = data->find("result");
  if (result == data->end()) shape("the answer's data has no \"result\"");
  if (answer.result_type == "matrix" && result->is_array()) {
    answer.series = matrix_of(*result);
  } else if (answer.result_type == "vector" && result->is_array()) {
    answer.series = vector_of(*result);
  } else if (answer.result_type == "scalar" || answer.result_type == "string") {
    if (answer.result_type == "scalar") answer.series.push_back(Series{{}, {point_of(*result)}});
  } else {
    shape(
        fmt::format("the answer's result type \"{}\" is not one of the API's", answer.result_type));
  }
  answer.warnings = answer_warnings(doc);
  return answer;
}

std::vector<Labels> series_answer(const json& doc) {
  const auto data = doc.find("data");
  if (data == doc.end() || !data->is_array()) shape("the answer has no \"data\" list");
  std::vector<Labels> out;
  out.reserve(data->size());
  for (const auto& metric : *data) out.push_back(labels_of(metric));
  return out;
}

std::vector<std::string> answer_warnings(const json& doc) {
  std::vector<std::string> out;
  const auto warnings = doc.find("warnings");
  if (warnings != doc.end() && warnings->is_array()) {
    for (const auto& w : *warnings) out.push_back(w.is_string() ? w.get<std::string>() : brief(w));
  }
  const auto partial = doc.find("isPartial");
  if (partial != doc.end() && partial->is_boolean() && partial->get<bool>()) {
    out.emplace_back(
        "the answer is partial (isPartial): some of the server's storage nodes did not answer");
  }
  return out;
}

Series export_line(std::string_view line) {
  const bool bare_words =
      line.find("NaN") != std::string_view::npos || line.find("Inf") != std::string_view::npos;
  const json doc = bare_words ? json::parse(quote_bare_words(line), nullptr, false)
                              : json::parse(line, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) shape("an export line is not a JSON object");
  Series s;
  s.labels = labels_of(doc.value("metric", json::object()));
  const auto values = doc.find("values");
  const auto times = doc.find("timestamps");
  if (values == doc.end() || times == doc.end() || !values->is_array() || !times->is_array() ||
      values->size() != times->size()) {
    shape("an export line has no \"values\" and \"timestamps\" of one length");
  }
  s.points.reserve(values->size());
  for (std::size_t i = 0; i < values->size(); ++i) {
    const auto& t = (*times)[i];
    if (!t.is_number_integer()) shape("an export timestamp is not whole milliseconds");
    const auto t_ms = t.get<std::int64_t>();
    if (!ns_of_ms(t_ms) || (t.is_number_unsigned() && t.get<std::uint64_t>() > INT64_MAX)) {
      shape(
          fmt::format("export timestamp {} ms is past 2262-04-11, beyond what gpuscope's "
                      "nanosecond times hold",
                      brief(t)));
    }
    s.points.push_back(Point{t_ms, sample_value((*values)[i])});
  }
  return s;
}

bool is_limit_error(const ApiError& error) {
  for (const std::string_view words :
       {"maximum resolution", "too many points", "maxPointsPerTimeseries", "too many samples",
        "maxSamplesPerQuery", "maxSamplesPerSeries", "max-samples"}) {
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
