// The streaming (SAX) parse of the API's answers and of VictoriaMetrics' export lines: series,
// label sets and samples are built as the text is read, and nothing else is kept. A JSON
// document of an answer costs ~20 times its size (40 MB of samples: 865 MB) and nlohmann's copies
// of a deep one recurse (a "metric" nested 100,000 levels overflowed the stack); here the nesting
// is bounded as it is read (kMaxAnswerDepth) and memory is what the series hold.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tsdb/answer.hpp"

namespace gpuscope::tsdb {
namespace {

using nlohmann::json;

[[noreturn]] void shape(std::string what) {
  throw AnswerShapeError{std::move(what)};
}

// A bare JSON value for a message, at most 200 characters.
std::string said(const json& value) {
  std::string out = value.is_string() ? value.get<std::string>() : value.dump();
  if (out.size() > 200) out = out.substr(0, 200) + "…";
  return out;
}

constexpr std::string_view kNotPair = "a sample is not a [time, \"value\"] pair";

// The events of nlohmann's SAX interface that carry a value, as one small JSON value each (a
// string is moved, not copied); containers and keys are the handler's own.
template <class Handler>
struct ScalarEvents : nlohmann::json_sax<json> {
  bool null() override { return self().scalar(json()); }
  bool boolean(bool v) override { return self().scalar(json(v)); }
  bool number_integer(number_integer_t v) override { return self().scalar(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return self().scalar(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return self().scalar(json(v)); }
  bool string(string_t& v) override { return self().scalar(json(std::move(v))); }
  bool binary(binary_t&) override { return self().scalar(json()); }
  bool start_object(std::size_t) override { return self().open(true); }
  bool start_array(std::size_t) override { return self().open(false); }
  bool end_object() override { return self().close(); }
  bool end_array() override { return self().close(); }
  bool key(string_t& k) override {
    self().key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t at, const std::string&,
                   const nlohmann::detail::exception&) override {
    shape(fmt::format("{} is not JSON (at byte {})", self().what_, at));
  }
  void deeper(std::size_t depth) const {
    if (depth >= kMaxAnswerDepth) {
      shape(fmt::format("{} nests deeper than {} levels, which the API never does", self().what_,
                        kMaxAnswerDepth));
    }
  }

 private:
  Handler& self() { return static_cast<Handler&>(*this); }
  const Handler& self() const { return static_cast<const Handler&>(*this); }
};

enum class Role {
  Root,
  Data,
  DataList,
  Result,
  Item,
  Metric,
  Values,
  Pair,
  Warnings,
  LabelSet,
  Skip
};

class AnswerReader : public ScalarEvents<AnswerReader> {
 public:
  explicit AnswerReader(Answer& doc) : doc_(doc) {}
  bool root_object = false;

 private:
  friend struct ScalarEvents<AnswerReader>;
  Answer& doc_;
  std::vector<Role> stack_;
  std::string key_;  // the key being read in the innermost object
  std::string what_ = "the answer";
  Series item_;
  unsigned char held_ = 0;
  std::vector<json> pair_;
  bool pair_bad_ = false;

  void fail(std::string what) {
    if (doc_.problem) return;
    doc_.problem = std::move(what);
    doc_.series = {};  // its shape is wrong: what was read is no longer needed
    doc_.label_sets = {};
    item_ = {};
  }

  Role child(bool object) {
    if (stack_.empty()) {
      root_object = object;
      return Role::Root;
    }
    const std::string_view key = key_;
    switch (stack_.back()) {
      case Role::Root:
        if (key == "data") {
          doc_.data = object ? Answer::Kind::Object : Answer::Kind::Array;
          return object ? Role::Data : Role::DataList;
        }
        if (key == "warnings" && !object) return Role::Warnings;
        if (key == "error" || key == "errorType") {
          (key == "error" ? doc_.error : doc_.error_type) = object ? "(an object)" : "(an array)";
        }
        if (key == "status") doc_.status.clear();
        return Role::Skip;
      case Role::Data:
        if (key == "resultType") doc_.result_type_not_string = true;
        if (key != "result") return Role::Skip;
        doc_.result = object ? Answer::Kind::Other : Answer::Kind::Array;
        return object ? Role::Skip : Role::Result;
      case Role::DataList:
        if (object) return Role::LabelSet;
        fail("a series' \"metric\" is not an object");
        return Role::Skip;
      case Role::Result:
        ++doc_.result_items;
        if (!object) {
          doc_.result_non_object = true;
          if (doc_.result_scalars.size() < 3) doc_.result_scalars.emplace_back("[]");
          return Role::Skip;
        }
        item_ = {};
        held_ = 0;
        return Role::Item;
      case Role::Item:
        if (key == "metric" && !object) fail("a series' \"metric\" is not an object");
        if (key == "metric" && object) return Role::Metric;
        if (key == "values" && !object) {
          held_ |= Answer::kValues;
          return Role::Values;
        }
        if (key == "value" && !object) return start_pair();
        return Role::Skip;
      case Role::Values:
        if (!object) return start_pair();
        fail(std::string(kNotPair));
        return Role::Skip;
      case Role::Pair:
        pair_bad_ = true;
        return Role::Skip;
      case Role::Metric:
      case Role::LabelSet:
        fail(fmt::format("label {} is not a string", key));
        return Role::Skip;
      case Role::Warnings:
        doc_.warnings.emplace_back(object ? "(an object)" : "(an array)");
        return Role::Skip;
      case Role::Skip:
        return Role::Skip;
    }
    return Role::Skip;
  }

  Role start_pair() {
    pair_.clear();
    pair_bad_ = false;
    return Role::Pair;
  }

  bool open(bool object) {
    deeper(stack_.size());
    const Role role = child(object);
    stack_.push_back(role);
    key_.clear();
    return true;
  }

  bool close() {
    const Role role = stack_.back();
    stack_.pop_back();
    if (role == Role::Pair) end_pair();
    if (role == Role::Item && !doc_.problem) {
      doc_.series.push_back(std::move(item_));
      doc_.held.push_back(held_);
    }
    if (role == Role::LabelSet && !doc_.problem) doc_.label_sets.push_back(std::move(item_.labels));
    if (role == Role::LabelSet) item_ = {};
    return true;
  }

  void end_pair() {
    if (!stack_.empty() && stack_.back() == Role::Item) held_ |= Answer::kValue;
    if (pair_bad_ || pair_.size() != 2) return fail(std::string(kNotPair));
    if (doc_.problem) return;
    try {
      item_.points.push_back(Point{sample_time_ms(pair_[0]), sample_value(pair_[1])});
    } catch (const AnswerShapeError& e) {
      fail(e.what);
    }
  }

  bool scalar(json v);
};

bool AnswerReader::scalar(json v) {
  if (stack_.empty()) return true;  // a bare value: no status
  const std::string& key = key_;
  switch (stack_.back()) {
    case Role::Root:
      if (key == "status") doc_.status = v.is_string() ? v.get<std::string>() : "";
      if (key == "error") doc_.error = said(v);
      if (key == "errorType") doc_.error_type = said(v);
      if (key == "isPartial") doc_.partial = v.is_boolean() && v.get<bool>();
      if (key == "data") doc_.data = Answer::Kind::Other;
      break;
    case Role::Data:
      if (key == "resultType" && v.is_string()) doc_.result_type = v.get<std::string>();
      if (key == "resultType" && !v.is_string()) doc_.result_type_not_string = true;
      if (key == "result") doc_.result = Answer::Kind::Other;
      break;
    case Role::DataList:
      fail("a series' \"metric\" is not an object");
      break;
    case Role::Result:
      ++doc_.result_items;
      if (doc_.result_scalars.size() < 3) doc_.result_scalars.push_back(v.dump());
      break;
    case Role::Item:
      if (key == "metric") fail("a series' \"metric\" is not an object");
      break;
    case Role::Metric:
    case Role::LabelSet:
      if (!v.is_string()) {
        fail(fmt::format("label {} is not a string", key));
      } else if (!doc_.problem) {
        item_.labels.insert_or_assign(key, std::move(v.get_ref<std::string&>()));
      }
      break;
    case Role::Values:
      fail(std::string(kNotPair));
      break;
    case Role::Pair:
      if (pair_.size() < 3) pair_.push_back(std::move(v));
      break;
    case Role::Warnings:
      doc_.warnings.push_back(said(v));
      break;
    case Role::Skip:
      break;
  }
  return true;
}

// One export line: its labels, values and timestamps, paired at the end.
class ExportReader : public ScalarEvents<ExportReader> {
 public:
  Series series;
  std::vector<double> values;
  std::vector<std::int64_t> times;
  bool root_object = false, has_values = false, has_times = false;

 private:
  friend struct ScalarEvents<ExportReader>;
  enum class Part { Root, Metric, Values, Times, Skip };
  std::vector<Part> stack_;
  std::string key_;
  std::string what_ = "an export line";

  bool open(bool object) {
    deeper(stack_.size());
    Part part = Part::Skip;
    if (stack_.empty()) {
      root_object = object;
      part = object ? Part::Root : Part::Skip;
    } else if (stack_.back() == Part::Root) {
      if (key_ == "metric" && !object) shape("a series' \"metric\" is not an object");
      if (key_ == "metric") part = Part::Metric;
      if (key_ == "values" && !object) part = Part::Values;
      if (key_ == "timestamps" && !object) part = Part::Times;
      has_values |= part == Part::Values;
      has_times |= part == Part::Times;
    } else if (stack_.back() == Part::Metric) {
      shape(fmt::format("label {} is not a string", key_));
    } else if (stack_.back() == Part::Values) {
      shape("an export value is neither a number nor a string");
    } else if (stack_.back() == Part::Times) {
      shape("an export timestamp is not whole milliseconds");
    }
    stack_.push_back(part);
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  bool scalar(json v) {
    if (stack_.empty()) return true;
    switch (stack_.back()) {
      case Part::Root:
        if (key_ == "metric") shape("a series' \"metric\" is not an object");
        break;
      case Part::Metric:
        if (!v.is_string()) shape(fmt::format("label {} is not a string", key_));
        series.labels.insert_or_assign(key_, std::move(v.get_ref<std::string&>()));
        break;
      case Part::Values:
        values.push_back(sample_value(v));
        break;
      case Part::Times:
        times.push_back(timestamp(v));
        break;
      case Part::Skip:
        break;
    }
    return true;
  }

  static std::int64_t timestamp(const json& t) {
    if (!t.is_number_integer()) shape("an export timestamp is not whole milliseconds");
    const auto t_ms = t.get<std::int64_t>();
    if (!ns_of_ms(t_ms) || (t.is_number_unsigned() && t.get<std::uint64_t>() > INT64_MAX)) {
      shape(
          fmt::format("export timestamp {} ms is past 2262-04-11, beyond what gpuscope's "
                      "nanosecond times hold",
                      said(t)));
    }
    return t_ms;
  }
};

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

Answer answer_document(std::string_view body) {
  Answer doc;
  AnswerReader reader(doc);
  try {
    json::sax_parse(body, &reader);
  } catch (const json::exception&) {  // input the SAX parser itself refuses (not UTF-8)
    shape("the answer is not JSON");
  }
  if (!reader.root_object || doc.status.empty()) shape("the answer is JSON without a \"status\"");
  return doc;
}

Series export_line(std::string_view line) {
  const bool bare_words =
      line.find("NaN") != std::string_view::npos || line.find("Inf") != std::string_view::npos;
  const std::string quoted = bare_words ? quote_bare_words(line) : std::string();
  ExportReader reader;
  try {
    json::sax_parse(bare_words ? std::string_view(quoted) : line, &reader);
  } catch (const json::exception&) {
    shape("an export line is not a JSON object");
  } catch (const AnswerShapeError& e) {
    if (e.what.starts_with("an export line is not JSON"))
      shape("an export line is not a JSON object");
    throw;
  }
  if (!reader.root_object) shape("an export line is not a JSON object");
  if (!reader.has_values || !reader.has_times || reader.values.size() != reader.times.size()) {
    shape("an export line has no \"values\" and \"timestamps\" of one length");
  }
  Series s = std::move(reader.series);
  s.points.reserve(reader.values.size());
  for (std::size_t i = 0; i < reader.values.size(); ++i) {
    s.points.push_back(Point{reader.times[i], reader.values[i]});
  }
  return s;
}

}  // namespace gpuscope::tsdb
