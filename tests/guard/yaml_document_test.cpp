// YAML as JSON with lines, through the real libgpuscope_yaml.so: YAML 1.2's core types, quoted
// scalars kept as text, the line of every key, and errors that name their line.
#include "core/yaml_document.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace gpuscope {
namespace {

TEST(YamlDocument, ScalarsFollowTheCoreSchemaAndQuotesKeepText) {
  const auto doc = parse_yaml(
      "a: true\nb: 12\nc: 0.5\nd: ~\ne: yes\nf: \"12\"\ng: 0x1f\nh: [1, two]\ni: 1e3\n", "t.yaml");
  EXPECT_EQ(doc.value["a"], true);
  EXPECT_EQ(doc.value["b"], 12);
  EXPECT_DOUBLE_EQ(doc.value["c"].get<double>(), 0.5);
  EXPECT_TRUE(doc.value["d"].is_null());
  EXPECT_EQ(doc.value["e"], "yes");  // YAML 1.1's boolean stays a word
  EXPECT_EQ(doc.value["f"], "12");
  EXPECT_EQ(doc.value["g"], 31);
  EXPECT_EQ(doc.value["h"][1], "two");
  EXPECT_DOUBLE_EQ(doc.value["i"].get<double>(), 1000);
}

TEST(YamlDocument, EveryKeyKnowsItsLine) {
  const auto doc =
      parse_yaml("# comment\nidle:\n  cancel: 2h\n\n  exempt:\n    users: [a]\n", "guard.yaml");
  EXPECT_EQ(doc.line_of("/idle"), 2);
  EXPECT_EQ(doc.line_of("/idle/cancel"), 3);
  EXPECT_EQ(doc.line_of("/idle/exempt/users"), 6);
  EXPECT_EQ(doc.line_of("/idle/exempt/users/0"), 6);
  EXPECT_EQ(doc.where("/idle/nothing/here"), "guard.yaml line 2");
}

TEST(YamlDocument, ErrorsNameTheLine) {
  const auto message = [](const std::string& text) {
    try {
      parse_yaml(text, "g.yaml");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("a: 1\nb: [1, 2\nc: 3\n").find("g.yaml: line"), std::string::npos);
  EXPECT_NE(message("a: 1\nb: 2\na: 3\n").find("line 3: 'a' is given twice"), std::string::npos);
  EXPECT_NE(message("? [1, 2]\n: x\n").find("a key must be a plain word"), std::string::npos);
  std::string deep;
  for (int i = 0; i < 70; ++i) deep += "[";
  EXPECT_NE(message(deep).find("line 1"), std::string::npos);
}

TEST(YamlDocument, DeepNestingIsRefused) {
  std::string deep = "a: ";
  for (int i = 0; i < 80; ++i) deep += "[";
  for (int i = 0; i < 80; ++i) deep += "]";
  try {
    parse_yaml(deep + "\n", "g.yaml");
    FAIL() << "nesting of 80 levels was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("deeper than 64"), std::string::npos) << e.what();
  }
}

TEST(YamlDocument, AnEmptyFileIsNull) {
  EXPECT_TRUE(parse_yaml("", "empty.yaml").value.is_null());
  EXPECT_TRUE(parse_yaml("# only a comment\n", "c.yaml").value.is_null());
}

}  // namespace
}  // namespace gpuscope
