// The site report's document: its data (site_report_data.hpp) gzip+base64 in #site-data, the
// heatmap's bytes gzip+base64 in #site-heatmap, uPlot and web/src/site*.js to draw them.
#include "report/site_report.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "report/html_data.hpp"
#include "report/html_report.hpp"
#include "report/site_report_data.hpp"
#include "report/web_assets.hpp"

namespace gpuscope::report {

using nlohmann::json;

namespace {

template <std::size_t N>
std::string joined(const std::string_view (&chunks)[N]) {
  std::string out;
  for (std::string_view chunk : chunks) out += chunk;
  return out;
}

std::string packed(std::string_view bytes) {
  const std::string z = gzip(bytes);
  return base64({reinterpret_cast<const std::uint8_t*>(z.data()), z.size()});
}

}  // namespace

std::string site_report_html(const SiteReportData& data) {
  const json object = site_report_json(data);
  const std::string title = object["title"].get<std::string>();
  const std::string payload = packed(json_for_script(object));
  const std::vector<std::uint8_t> cells = site_heatmap_bytes(data.heatmap);
  const std::string heatmap = packed({reinterpret_cast<const char*>(cells.data()), cells.size()});

  std::string out;
  out.reserve(payload.size() + heatmap.size() + 128 * 1024);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"generator\" content=\"" + html_escape(data.generator) + "\">\n";
  out += "<title>" + html_escape(title) + "</title>\n<style>\n";
  out += joined(web::kUplotCss);
  out += "\n</style>\n<style>\n";
  out += joined(web::kReportCss) + "\n" + joined(web::kSiteCss);
  out += "\n</style>\n</head>\n<body>\n";
  out += "<header><h1 id=\"title\">" + html_escape(title) + "</h1>";
  out += "<p id=\"subtitle\"></p></header>\n";
  out +=
      "<main id=\"report\"><noscript>This report draws its tables and charts with JavaScript; "
      "enable it to see them.</noscript></main>\n";
  out += "<footer id=\"footer\">" + html_escape(data.generator) + "</footer>\n";
  out += "<script type=\"application/gzip\" id=\"site-data\" data-encoding=\"gzip+base64\">" +
         payload + "</script>\n";
  out += "<script type=\"application/gzip\" id=\"site-heatmap\" data-encoding=\"gzip+base64\">" +
         heatmap + "</script>\n";
  out += "<script>\n" + script_safe(joined(web::kUplotJs)) + "\n</script>\n";
  out += "<script>\n" + script_safe(joined(web::kSiteHeatmapJs)) + "\n</script>\n";
  out += "<script>\n" + script_safe(joined(web::kSiteJs)) + "\n</script>\n";
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace gpuscope::report
