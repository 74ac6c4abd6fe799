// gpuscope's one convention for failure (CONTRIBUTING.md, "Errors"): what fails throws Error,
// caught once in cli::run and printed as "gpuscope: error: <what> (<why>); <what to do>";
// std::optional says "absent" (an unsupported metric, no record), never "failed"; NVML calls
// return nvml::Expected (no allocation on the sampling path).
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace gpuscope {

// What went wrong, why, and what the user can do about it. Exit code 2 marks usage errors
// (bad options, bad input named on the command line), 1 everything else.
class Error : public std::runtime_error {
 public:
  Error(std::string what, std::string why = {}, std::string hint = {}, int exit_code = 1)
      : std::runtime_error(compose(what, why, hint)),
        what_(std::move(what)),
        why_(std::move(why)),
        hint_(std::move(hint)),
        exit_code_(exit_code) {}

  // A usage error: the command line or an input it names is wrong (exit code 2).
  static Error usage(std::string what, std::string why = {}, std::string hint = {}) {
    return Error(std::move(what), std::move(why), std::move(hint), 2);
  }

  const std::string& summary() const { return what_; }
  const std::string& reason() const { return why_; }
  const std::string& hint() const { return hint_; }
  int exit_code() const { return exit_code_; }

 private:
  static std::string compose(const std::string& what, const std::string& why,
                             const std::string& hint) {
    std::string text = what;
    if (!why.empty()) text += " (" + why + ")";
    if (!hint.empty()) text += "; " + hint;
    return text;
  }

  std::string what_;
  std::string why_;
  std::string hint_;
  int exit_code_;
};

}  // namespace gpuscope
