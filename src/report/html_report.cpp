#include "report/html_report.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <string_view>

#include "report/html_data.hpp"
#include "report/web_assets.hpp"

namespace gpuscope::report {
namespace {

template <std::size_t N>
void append_chunks(std::string& out, const std::string_view (&chunks)[N]) {
  for (std::string_view chunk : chunks) out += chunk;
}

template <std::size_t N>
std::string joined(const std::string_view (&chunks)[N]) {
  std::string out;
  append_chunks(out, chunks);
  return out;
}

}  // namespace

std::string script_safe(std::string text) {
  for (std::size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 1)) {
    std::string word = text.substr(at + 2, 6);
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (word == "script") text.insert(at + 1, "\\");
  }
  return text;
}

std::vector<Metric> html_report_grid_metrics() {
  return {Metric::PowerW,          Metric::SmActivePct,   Metric::GpuUtilPct,
          Metric::TensorActivePct, Metric::DramActivePct, Metric::TemperatureC};
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string html_report(const analyze::Analysis& analysis, const HtmlReportOptions& options) {
  nlohmann::json data = html_report_data(analysis, options.limits);
  std::size_t instances = 0;
  for (const auto& g : analysis.gpus) instances += g.key.mig ? 1U : 0U;
  const std::size_t gpus = analysis.gpus.size() - instances;
  const std::string title =
      !options.title.empty() ? options.title
      : instances == 0 ? fmt::format("gpuscope report · {} GPU{}", gpus, gpus == 1 ? "" : "s")
                       : fmt::format("gpuscope report · {} GPU{} · {} MIG instance{}", gpus,
                                     gpus == 1 ? "" : "s", instances, instances == 1 ? "" : "s");
  data["title"] = title;
  data["generator"] = options.generator;
  if (options.kernels) data["kernels"] = options.kernels->to_json();
  // Compressed, the data is a quarter of its size: Chromium's HTML parser, which must scan the
  // whole element before any script runs, is done with a big report's page 4 times sooner, and
  // the browser inflates it natively (DecompressionStream) in milliseconds.
  const std::string json = json_for_script(data);
  const std::string packed = gzip(json);
  const std::string payload =
      base64({reinterpret_cast<const std::uint8_t*>(packed.data()), packed.size()});

  std::string out;
  out.reserve(payload.size() + 128 * 1024);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"generator\" content=\"" + html_escape(options.generator) + "\">\n";
  out += "<title>" + html_escape(title) + "</title>\n<style>\n";
  append_chunks(out, web::kUplotCss);
  out += "\n</style>\n<style>\n";
  append_chunks(out, web::kReportCss);
  out += "\n</style>\n</head>\n<body>\n";
  out += "<header><h1 id=\"title\">" + html_escape(title) + "</h1>";
  out += "<p id=\"subtitle\"></p></header>\n";
  out += "<main id=\"report\">";
  for (const std::string& section : options.sections_html) out += section;
  out +=
      "<noscript>This report draws its charts with JavaScript; enable it to see them."
      "</noscript></main>\n";
  out += "<footer id=\"footer\">" + html_escape(options.generator) + "</footer>\n";
  out += "<script type=\"application/gzip\" id=\"gpuscope-data\" data-encoding=\"gzip+base64\">" +
         payload + "</script>\n";
  out += "<script>\n" + script_safe(joined(web::kUplotJs)) + "\n</script>\n";
  // The drawing code: charts.js, then kernels.js (the kernel lanes), phases.js (the phase
  // lane) and tables.js (the paged tables), in one element.
  out += "<script>\n" +
         script_safe(joined(web::kChartsJs) + "\n" + joined(web::kKernelsJs) + "\n" +
                     joined(web::kPhasesJs) + "\n" + joined(web::kTablesJs)) +
         "\n</script>\n";
  out += "<script>\n" + script_safe(joined(web::kReportJs)) + "\n</script>\n";
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace gpuscope::report
