#include "docgen/command_doc.hpp"

#include <algorithm>
#include <cctype>

namespace gpuscope::docgen {
namespace {

// The type name as registered: CLI11 appends each check's description (":{a,b}") to it.
std::string own_type_name(CLI::Option& option) {
  std::string name = option.get_type_name();
  for (int i = 0;; ++i) {
    const CLI::Validator* check = nullptr;
    try {
      check = option.get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      break;
    }
    const std::string suffix = ":" + check->get_description();
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      name.erase(name.size() - suffix.size());
    }
  }
  return name;
}

// The words of an IsMember check ("{auto,gpm,dcgm}"), the only checks CLI11 describes so.
std::vector<std::string> member_words(CLI::Option& option) {
  for (int i = 0;; ++i) {
    const CLI::Validator* check = nullptr;
    try {
      check = option.get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      return {};
    }
    const std::string text = check->get_description();
    if (text.size() > 2 && text.front() == '{' && text.back() == '}') {
      return CLI::detail::split(text.substr(1, text.size() - 2), ',');
    }
  }
}

bool is_word(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) {
    return std::islower(c) || std::isdigit(c) || c == '-' || c == '_';
  });
}

// A type name that lists its words, "off|safe|full": those words.
std::vector<std::string> listed_words(const std::string& type_name) {
  if (type_name.find('|') == std::string::npos) return {};
  std::vector<std::string> words = CLI::detail::split(type_name, '|');
  return std::all_of(words.begin(), words.end(), is_word) ? words : std::vector<std::string>{};
}

ValueKind kind_of(const std::string& value_name, const std::string& option_name) {
  std::string name = value_name;
  while (name.ends_with(".")) name.pop_back();
  if (name.empty()) return ValueKind::Word;
  if (name == "CMD ARGS" || option_name == "command") return ValueKind::Command;
  if (name == "DIR") return ValueKind::Directory;
  if (name == "FILE" || name == "PATH" || name == "INPUT" || name == "PREFIX" ||
      name.find(".db") != std::string::npos || name.find(".sqlite") != std::string::npos) {
    return ValueKind::File;
  }
  return ValueKind::Word;
}

OptionDoc describe_option(CLI::Option& option, const ValueLists& extra) {
  OptionDoc doc;
  doc.help = option.get_description();
  doc.group = option.get_group();
  doc.positional = !option.nonpositional();
  for (const std::string& name : option.get_snames()) doc.names.push_back("-" + name);
  for (const std::string& name : option.get_lnames()) doc.names.push_back("--" + name);
  const bool flag = option.nonpositional() && option.get_expected_max() == 0;
  if (flag) return doc;
  doc.value_name = own_type_name(option);
  if (doc.positional) doc.positional_name = option.get_name();
  doc.many = option.get_expected_max() > 1;
  const std::string key = doc.positional ? doc.positional_name : doc.names.back();
  doc.kind = kind_of(doc.value_name, doc.positional_name);
  doc.values = member_words(option);
  if (doc.values.empty()) doc.values = listed_words(doc.value_name);
  if (const auto found = extra.find(key); doc.values.empty() && found != extra.end()) {
    doc.values = found->second;
  }
  if (doc.value_name.empty()) doc.value_name = doc.positional ? doc.positional_name : "VALUE";
  return doc;
}

}  // namespace

CommandDoc describe(CLI::App& app, const ValueLists& extra) {
  CommandDoc doc;
  doc.name = app.get_name();
  doc.description = app.get_description();
  doc.footer = app.get_footer();
  for (CLI::Option* option : app.get_options()) {
    if (option->get_group().empty()) continue;  // hidden
    doc.options.push_back(describe_option(*option, extra));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;  // hidden
    doc.commands.push_back(describe(*sub, extra));
  }
  return doc;
}

std::string full_name(const CommandDoc& top, const CommandDoc& command) {
  return &top == &command ? top.name : top.name + " " + command.name;
}

}  // namespace gpuscope::docgen
