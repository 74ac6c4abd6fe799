#include "util/secret_text.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace gpuscope::util {
namespace {

// The first `name` (lower case) in `text` from `from` on, whatever the case of `text`.
std::size_t find_any_case(const std::string& text, std::string_view name, std::size_t from) {
  const auto it = std::search(
      text.begin() + static_cast<std::ptrdiff_t>(from), text.end(), name.begin(), name.end(),
      [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  return it == text.end() ? std::string::npos : static_cast<std::size_t>(it - text.begin());
}

void blank_all(std::string& text, const std::string& secret) {
  if (secret.empty()) return;
  for (auto at = text.find(secret); at != std::string::npos;
       at = text.find(secret, at + kRedacted.size())) {
    text.replace(at, secret.size(), kRedacted);
  }
}

bool ends_value(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0 || c == '"' || c == '\'' || c == ',' ||
         c == ';' || c == ']' || c == '}' || c == '<' || c == '>' || c == '&';
}

// The end of the value after an Authorization header's name at `at`, or npos when what follows
// is no header value (the word in a sentence): a ':' or '=' must come first.
std::size_t blank_header_value(std::string& text, std::size_t at) {
  std::size_t i = at;
  bool separated = false;
  while (i < text.size() && i < at + 8 &&
         std::string_view(" \t\"':=[").find(text[i]) != std::string_view::npos) {
    separated = separated || text[i] == ':' || text[i] == '=';
    ++i;
  }
  if (!separated || i >= text.size()) return std::string::npos;
  // A scheme word ("Bearer", "Basic") followed by a space: the credential is the next word.
  std::size_t word = i;
  while (word < text.size() && std::isalpha(static_cast<unsigned char>(text[word])) != 0) ++word;
  if (word > i && word + 1 < text.size() && text[word] == ' ' && !ends_value(text[word + 1])) {
    i = word + 1;
  }
  if (text.compare(i, kRedacted.size(), kRedacted) == 0) return i + kRedacted.size();
  std::size_t end = i;
  while (end < text.size() && !ends_value(text[end])) ++end;
  if (end == i) return std::string::npos;
  text.replace(i, end - i, kRedacted);
  return i + kRedacted.size();
}

// Where the authority of `url` begins: after "scheme://", else 0.
std::size_t authority_start(std::string_view url) {
  const auto colon = url.find("://");
  if (colon == std::string_view::npos || colon == 0) return 0;
  if (std::isalpha(static_cast<unsigned char>(url[0])) == 0) return 0;
  for (std::size_t i = 1; i < colon; ++i) {
    const auto c = static_cast<unsigned char>(url[i]);
    if (std::isalnum(c) == 0 && c != '+' && c != '-' && c != '.') return 0;
  }
  return colon + 3;
}

}  // namespace

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t block = 0;
    for (std::size_t k = 0; k < 3; ++k) {
      block = block << 8 | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0U);
    }
    for (std::size_t k = 0; k < 4; ++k) {
      out += k <= n ? kAlphabet[(block >> (18 - 6 * k)) & 63] : '=';
    }
  }
  return out;
}

std::string redact_secrets(std::string_view text, const std::vector<std::string>& secrets) {
  std::string out(text);
  // Longest first, so a secret that holds another is blanked whole.
  std::vector<std::string> forms;
  for (const auto& secret : secrets) {
    if (secret.empty()) continue;
    forms.push_back(secret);
    forms.push_back(base64(secret));
  }
  std::sort(forms.begin(), forms.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const auto& form : forms) blank_all(out, form);
  constexpr std::string_view kName = "authorization";
  for (std::size_t at = find_any_case(out, kName, 0); at != std::string::npos;) {
    const std::size_t next = blank_header_value(out, at + kName.size());
    at = find_any_case(out, kName, next == std::string::npos ? at + kName.size() : next);
  }
  return out;
}

bool url_has_credentials(std::string_view url) {
  return url.find('@', authority_start(url)) != std::string_view::npos;
}

std::string url_without_credentials(std::string_view url) {
  const std::size_t start = authority_start(url);
  const auto at = url.rfind('@');
  if (at == std::string_view::npos || at < start) return std::string(url);
  return std::string(url.substr(0, start)) + "[credentials]" + std::string(url.substr(at));
}

}  // namespace gpuscope::util
