#include "kernels/output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/json_text.hpp"
#include "util/text_table.hpp"

namespace gpuscope::kernels {
namespace {

using nlohmann::json;

std::size_t shown(const Summary& s, const OutputOptions& o) {
  return o.top == 0 ? s.kernels.size() : std::min(o.top, s.kernels.size());
}

std::string label(const Summary& s, const OutputOptions& o) {
  if (o.per_rank && s.files.size() == 1) return s.files.front();
  return fmt::format("{} report{} summed", s.files.size(), s.files.size() == 1 ? "" : "s");
}

// Right-aligned columns sized to their widest cell, the last one (the name) left-aligned, a
// rule under the header.
std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows) {
  std::vector<util::Align> align(header.size(), util::Align::Right);
  if (!align.empty()) align.back() = util::Align::Left;
  const auto text = util::render_table(header, rows, {align, true});
  return text.header + text.body;
}

std::vector<std::string> stat_cells(const DurationStats& s) {
  return {fmt::format("{}", s.total_ns),     fmt::format("{}", s.count),
          fmt::format("{:.1f}", s.avg_ns),   fmt::format("{:.1f}", s.median_ns),
          fmt::format("{}", s.min_ns),       fmt::format("{}", s.max_ns),
          fmt::format("{:.1f}", s.stddev_ns)};
}

json stats_json(const DurationStats& s) {
  return {{"total_ns", s.total_ns}, {"avg_ns", s.avg_ns}, {"med_ns", s.median_ns},
          {"min_ns", s.min_ns},     {"max_ns", s.max_ns}, {"stddev_ns", s.stddev_ns}};
}

}  // namespace

std::string text_view(const std::vector<Summary>& summaries, const OutputOptions& o) {
  std::string out;
  for (std::size_t i = 0; i < summaries.size(); ++i) {
    const Summary& s = summaries[i];
    if (i > 0) out += "\n";
    out += fmt::format("== {} (names: {}) ==\n\n", label(s, o), o.names);
    out += "cuda_gpu_kern_sum";
    const std::size_t n = shown(s, o);
    if (n < s.kernels.size()) out += fmt::format(" (top {} of {} kernels)", n, s.kernels.size());
    out += "\n\n";
    if (s.kernels.empty()) {
      out += "No kernels recorded.\n";
    } else {
      std::vector<std::vector<std::string>> rows;
      for (std::size_t k = 0; k < n; ++k) {
        const KernelRow& r = s.kernels[k];
        std::vector<std::string> row = {fmt::format("{:.1f}", r.time_percent)};
        const auto cells = stat_cells(r.stats);
        row.insert(row.end(), cells.begin(), cells.end());
        row.push_back(r.name);
        rows.push_back(std::move(row));
      }
      out += table({"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)", "Min (ns)",
                    "Max (ns)", "StdDev (ns)", "Name"},
                   rows);
    }
    out += "\ncuda_gpu_mem_sum\n\n";
    if (s.memory.empty()) {
      out += "No memory operations recorded.\n";
    } else {
      std::vector<std::vector<std::string>> rows;
      for (const MemoryRow& r : s.memory) {
        std::vector<std::string> row = {fmt::format("{:.1f}", r.time_percent)};
        const auto cells = stat_cells(r.stats);
        row.insert(row.end(), cells.begin(), cells.end());
        row.push_back(fmt::format("{:.3f}", static_cast<double>(r.total_bytes) / 1e6));
        row.push_back(r.operation);
        rows.push_back(std::move(row));
      }
      out += table({"Time (%)", "Total Time (ns)", "Count", "Avg (ns)", "Med (ns)", "Min (ns)",
                    "Max (ns)", "StdDev (ns)", "Total (MB)", "Operation"},
                   rows);
    }
  }
  return out;
}

std::string json_view(const std::vector<Summary>& summaries, const OutputOptions& o) {
  json list = json::array();
  for (const Summary& s : summaries) {
    json kernels = json::array();
    for (std::size_t k = 0; k < shown(s, o); ++k) {
      const KernelRow& r = s.kernels[k];
      json row = {{"name", r.name}, {"time_percent", r.time_percent}, {"instances", r.stats.count}};
      row.update(stats_json(r.stats));
      kernels.push_back(std::move(row));
    }
    json memory = json::array();
    for (const MemoryRow& r : s.memory) {
      json row = {{"operation", r.operation},
                  {"time_percent", r.time_percent},
                  {"count", r.stats.count},
                  {"total_bytes", r.total_bytes}};
      row.update(stats_json(r.stats));
      memory.push_back(std::move(row));
    }
    list.push_back({{"files", s.files},
                    {"kernel_count", s.kernels.size()},
                    {"kernels", std::move(kernels)},
                    {"memory", std::move(memory)},
                    {"notes", s.notes}});
  }
  json out = {{"names", o.names},
              {"per_rank", o.per_rank},
              {"top", o.top == 0 ? json(nullptr) : json(o.top)},
              {"summaries", std::move(list)}};
  return json_text(out, 2) + "\n";
}

std::string csv_view(const std::vector<Summary>& summaries, const OutputOptions& o) {
  std::string out =
      "file,kind,name,time_percent,total_ns,count,avg_ns,med_ns,min_ns,max_ns,stddev_ns,"
      "total_bytes\n";
  for (const Summary& s : summaries) {
    const std::string file = o.per_rank && s.files.size() == 1 ? s.files.front() : "all";
    auto line = [&](const char* kind, const std::string& name, double percent,
                    const DurationStats& st, const std::string& bytes) {
      out +=
          fmt::format("{},{},{},{:.4f},{},{},{:.4f},{:.4f},{},{},{:.4f},{}\n",
                      util::csv_field(file), kind, util::csv_field(name), percent, st.total_ns,
                      st.count, st.avg_ns, st.median_ns, st.min_ns, st.max_ns, st.stddev_ns, bytes);
    };
    for (std::size_t k = 0; k < shown(s, o); ++k) {
      const KernelRow& r = s.kernels[k];
      line("kernel", r.name, r.time_percent, r.stats, "");
    }
    for (const MemoryRow& r : s.memory) {
      line("memory", r.operation, r.time_percent, r.stats, fmt::format("{}", r.total_bytes));
    }
  }
  return out;
}

}  // namespace gpuscope::kernels
