// A name a user can see, spelled once: an enum for code to compare and the word stored in a run
// database beside each value. `Words` gives the enum (`Value`, with an `Other` last) and the
// table `kWords` of (value, word); StoredWord<Words> is the type. A word this gpuscope does not
// know (a newer one wrote the file) reads as Other and keeps its word, so it is still shown as it
// was stored. Used by EventKind (core/event_kinds.hpp) and IntensityKind (core/grid_intensity.hpp).
#pragma once

#include <array>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace gpuscope {

template <typename Words>
class StoredWord : public Words {
 public:
  using Value = typename Words::Value;

  // No kind said yet: Other, with no word.
  StoredWord() : value_(Words::Other) {}
  StoredWord(Value value) : value_(value) {}  // NOLINT: implicit, as for an enum
  // The kind a stored word stands for; Other (keeping the word) when this gpuscope does not know
  // it.
  static StoredWord parse(std::string_view word) {
    for (const auto& [value, text] : Words::kWords) {
      if (text == word) return StoredWord(value);
    }
    StoredWord other(Words::Other);
    other.other_ = std::string(word);
    return other;
  }

  Value value() const { return value_; }
  // The stored word.
  std::string_view text() const {
    for (const auto& [value, text] : Words::kWords) {
      if (value == value_) return text;
    }
    return other_;
  }
  bool operator==(Value value) const { return value_ == value; }
  bool operator==(const StoredWord& other) const { return text() == other.text(); }

 private:
  Value value_;
  std::string other_;
};

// Writes the stored word (for logs and test messages).
template <typename Words>
std::ostream& operator<<(std::ostream& out, const StoredWord<Words>& word) {
  return out << word.text();
}

}  // namespace gpuscope
