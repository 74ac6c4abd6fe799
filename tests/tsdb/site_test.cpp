// The site's configuration: where the URL comes from (option, environment, files in order), the
// file's format and its errors, and credentials read only from private files.
#include "tsdb/site.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "core/error.hpp"
#include "support/refusal.hpp"
#include "support/temp_dir.hpp"
#include "tsdb/client.hpp"

namespace gpuscope::tsdb {
namespace {

using testing::TempDir;

util::EnvLookup env_of(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    const auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

void write(const std::string& path, const std::string& text, mode_t mode = 0600) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
  chmod(path.c_str(), mode);
}

using gpuscope::testing::refusal_message;

TEST(Site, FileKeysCommentsAndBlankLines) {
  const Site site = parse_site_file(
      "# the site's VictoriaMetrics cluster\n\n  url = http://vmselect:8481/select/0/prometheus  "
      "# comment\nbearer_token_file=/etc/gpuscope/token\ntimeout = 45s\nca_file = /etc/ca.pem\n"
      "insecure_skip_verify = false\n",
      "/x.conf");
  EXPECT_EQ(site.url, "http://vmselect:8481/select/0/prometheus");
  EXPECT_EQ(site.url_from, "/x.conf:3");
  EXPECT_EQ(site.bearer_token_file, "/etc/gpuscope/token");
  EXPECT_EQ(site.timeout, std::chrono::milliseconds(45'000));
  EXPECT_EQ(site.ca_file, "/etc/ca.pem");
  EXPECT_FALSE(site.insecure_skip_verify);
}

TEST(Site, FileErrorsNameTheLine) {
  EXPECT_NE(refusal_message([] {
              parse_site_file("url = http://a\npasword_file = x\n", "/c");
            }).find("/c:2 cannot be used (unknown key \"pasword_file\")"),
            std::string::npos);
  EXPECT_NE(refusal_message([] { parse_site_file("url http://a\n", "/c"); }).find("/c:1"),
            std::string::npos);
  EXPECT_NE(refusal_message([] { parse_site_file("timeout = soon\n", "/c"); }).find("timeout"),
            std::string::npos);
  EXPECT_NE(
      refusal_message([] { parse_site_file("insecure_skip_verify = yes\n", "/c"); }).find("/c:1"),
      std::string::npos);
  EXPECT_NE(refusal_message([] {
              parse_site_file("bearer_token_file = a\nbasic_auth_file = b\n", "/c");
            }).find("both"),
            std::string::npos);
}

TEST(Site, Timeouts) {
  EXPECT_EQ(parse_timeout("500ms"), std::chrono::milliseconds(500));
  EXPECT_EQ(parse_timeout("2m"), std::chrono::milliseconds(120'000));
  EXPECT_EQ(parse_timeout("2.5"), std::chrono::milliseconds(2500));
  EXPECT_EQ(parse_timeout("1h"), std::chrono::milliseconds(3'600'000));
  EXPECT_FALSE(parse_timeout("0s"));
  EXPECT_FALSE(parse_timeout("-1s"));
  EXPECT_FALSE(parse_timeout("s"));
  EXPECT_FALSE(parse_timeout("3 days"));
}

TEST(Site, UrlOrderOptionThenEnvironmentThenFiles) {
  TempDir dir;
  const std::string system = dir.file("etc/prometheus.conf");
  write(system, "url = http://system:9090\ntimeout = 7s\n");
  // The system file alone.
  Site site = find_site(std::nullopt, env_of({{"HOME", dir.file("home")}}), "--url", system);
  EXPECT_EQ(site.url, "http://system:9090");
  EXPECT_EQ(site.url_from, system + ":1");
  // The user's file wins over the system's.
  write(dir.file("home/.config/gpuscope/prometheus.conf"), "url = http://user:9090/\n");
  site = find_site(std::nullopt, env_of({{"HOME", dir.file("home")}}), "--url", system);
  EXPECT_EQ(site.url, "http://user:9090");  // trailing slash dropped
  EXPECT_FALSE(site.timeout);               // the system file is not read then
  // XDG_CONFIG_HOME replaces ~/.config.
  write(dir.file("xdg/gpuscope/prometheus.conf"), "url = http://xdg:9090\n");
  site = find_site(std::nullopt,
                   env_of({{"HOME", dir.file("home")}, {"XDG_CONFIG_HOME", dir.file("xdg")}}),
                   "--url", system);
  EXPECT_EQ(site.url, "http://xdg:9090");
  // GPUSCOPE_CONFIG replaces both; the environment's URL wins over it, the option over both.
  write(dir.file("mine.conf"), "url = http://mine:9090\ntimeout = 3s\n");
  auto env = env_of({{"HOME", dir.file("home")}, {"GPUSCOPE_CONFIG", dir.file("mine.conf")}});
  EXPECT_EQ(find_site(std::nullopt, env, "--url", system).url, "http://mine:9090");
  env = env_of({{"HOME", dir.file("home")},
                {"GPUSCOPE_CONFIG", dir.file("mine.conf")},
                {"GPUSCOPE_PROMETHEUS_URL", "http://env:8428"}});
  site = find_site(std::nullopt, env, "--url", system);
  EXPECT_EQ(site.url, "http://env:8428");
  EXPECT_EQ(site.url_from, "GPUSCOPE_PROMETHEUS_URL");
  EXPECT_EQ(site.timeout, std::chrono::milliseconds(3000));  // the file's other keys apply
  site = find_site(std::string("https://option:443"), env, "--url", system);
  EXPECT_EQ(site.url, "https://option:443");
  EXPECT_EQ(site.url_from, "--url");
}

TEST(Site, MissingUrlAndBadUrlsAreErrors) {
  TempDir dir;
  const auto none = env_of({{"HOME", dir.file("home")}});
  EXPECT_NE(refusal_message([&] {
              find_site(std::nullopt, none, "--url", dir.file("no.conf"));
            }).find("no Prometheus or VictoriaMetrics server is configured"),
            std::string::npos);
  EXPECT_NE(refusal_message([&] {
              find_site(std::string("http://alice:secret@host:9090"), none, "--url",
                        dir.file("no.conf"));
            }).find("carries credentials"),
            std::string::npos);
  EXPECT_NE(refusal_message([&] {
              find_site(std::string("host:9090"), none, "--url", "/nonexistent");
            }).find("not an http:// or https:// URL"),
            std::string::npos);
  const auto missing = env_of({{"GPUSCOPE_CONFIG", dir.file("absent.conf")}});
  EXPECT_NE(refusal_message([&] {
              find_site(std::nullopt, missing, "--url", "/nonexistent");
            }).find("cannot read the configuration file"),
            std::string::npos);
}

TEST(Site, CredentialsInTheUrlAreRefusedHoweverSpelled) {
  TempDir dir;
  const auto none = env_of({{"HOME", dir.file("home")}});
  // Before: an upper-case or other scheme was refused with the URL (password and all) in the
  // message, and a password holding '/' or '#' hid the '@' from the check, so the URL passed
  // and was printed in every later message.
  for (const char* url : {"HTTP://alice:s3cret@host:9090", "ftp://alice:s3cret@host",
                          "http://alice:s3/cret@host:9090", "http://alice:s3#cret@host:9090",
                          "https://alice:s3?cret@host", "alice:s3cret@host:9090"}) {
    const std::string m =
        refusal_message([&] { find_site(std::string(url), none, "--url", dir.file("no.conf")); });
    EXPECT_NE(m.find("carries credentials"), std::string::npos) << url << ": " << m;
    EXPECT_EQ(m.find("s3"), std::string::npos) << m;
    EXPECT_EQ(m.find("cret"), std::string::npos) << m;
  }
  // The scheme's case does not matter otherwise.
  EXPECT_EQ(find_site(std::string("HTTPS://host:9090"), none, "--url", dir.file("no.conf")).url,
            "HTTPS://host:9090");
}

TEST(Site, AConfigurationFileOthersMayChangeIsRefused) {
  TempDir dir;
  write(dir.file("token"), "s3cret-token\n", 0600);
  const std::string text = "url = http://h:1\nbearer_token_file = " + dir.file("token") + "\n";
  const auto env = env_of({{"GPUSCOPE_CONFIG", dir.file("c.conf")}});
  for (const mode_t mode : {0666U, 0646U, 0620U}) {
    write(dir.file("c.conf"), text, mode);
    const std::string m =
        refusal_message([&] { find_site(std::nullopt, env, "--url", "/nonexistent"); });
    EXPECT_NE(m.find("may be changed by other users"), std::string::npos) << mode << ": " << m;
    EXPECT_NE(m.find("chmod go-w " + dir.file("c.conf")), std::string::npos) << m;
  }
  // Readable by all is fine: it names the credentials file, it does not hold the secret.
  write(dir.file("c.conf"), text, 0644);
  EXPECT_EQ(find_site(std::nullopt, env, "--url", "/nonexistent").url, "http://h:1");
  // The system's file too, when it is the one found.
  write(dir.file("etc.conf"), text, 0664);
  EXPECT_NE(refusal_message([&] {
              find_site(std::nullopt, env_of({{"HOME", dir.file("home")}}), "--url",
                        dir.file("etc.conf"));
            }).find("may be changed by other users"),
            std::string::npos);
}

TEST(Site, CredentialsFromPrivateFilesOnly) {
  TempDir dir;
  write(dir.file("token"), "s3cret-token\n", 0600);
  write(dir.file("auth"), "alice:pa:ss\n", 0640);
  write(dir.file("open"), "alice:pw\n", 0644);
  write(dir.file("nouser"), "justapassword\n", 0600);
  EXPECT_EQ(read_secret_file(dir.file("token"), "bearer token"), "s3cret-token");
  const std::string open =
      refusal_message([&] { read_secret_file(dir.file("open"), "basic auth"); });
  EXPECT_NE(open.find("may be read or changed by other users (mode 644)"), std::string::npos);
  EXPECT_NE(open.find("chmod 600"), std::string::npos);
  EXPECT_EQ(open.find("alice:pw"), std::string::npos);  // never the secret

  Site site;
  site.url = "http://h:1";
  site.basic_auth_file = dir.file("auth");
  const ClientOptions o = client_options(site);
  EXPECT_EQ(o.basic_auth, "alice:pa:ss");
  EXPECT_EQ(o.credentials_said, "basic auth as user \"alice\" from " + dir.file("auth"));
  site.basic_auth_file = dir.file("nouser");
  EXPECT_NE(refusal_message([&] { client_options(site); }).find("does not hold user:password"),
            std::string::npos);
  // The environment's credentials replace the file's.
  write(dir.file("c.conf"), "url = http://h:1\nbasic_auth_file = " + dir.file("auth") + "\n");
  const Site from_env =
      find_site(std::nullopt,
                env_of({{"GPUSCOPE_CONFIG", dir.file("c.conf")},
                        {"GPUSCOPE_PROMETHEUS_BEARER_TOKEN_FILE", dir.file("token")}}),
                "--url", "/nonexistent");
  EXPECT_EQ(from_env.bearer_token_file, dir.file("token"));
  EXPECT_TRUE(from_env.basic_auth_file.empty());
  EXPECT_EQ(client_options(from_env).bearer_token, "s3cret-token");
}

}  // namespace
}  // namespace gpuscope::tsdb
