#include "tsdb/series.hpp"

namespace gpuscope::tsdb {

const std::string& Series::name() const {
  static const std::string empty;
  const auto it = labels.find("__name__");
  return it == labels.end() ? empty : it->second;
}

const std::string* Series::label(const std::string& key) const {
  const auto it = labels.find(key);
  return it == labels.end() ? nullptr : &it->second;
}

}  // namespace gpuscope::tsdb
