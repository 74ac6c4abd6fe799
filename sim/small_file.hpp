// The simulated driver reads its scenario and state files through util::read_small_file; this
// is how it words a refusal ("is not a regular file (a FIFO)", "is larger than 4 MiB").
#pragma once

#include <string>

#include "util/small_file.hpp"

namespace gpuscope::sim {

using util::read_small_file;
using util::size_text;

inline std::string failure_text(const util::SmallFileFailure& failure) {
  if (!failure.file_kind.empty()) return "is not a regular file (" + failure.file_kind + ")";
  if (failure.limit != 0) return "is larger than " + size_text(failure.limit);
  return failure.reason;
}

}  // namespace gpuscope::sim
