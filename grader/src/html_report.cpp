// The grade as a page to look at (html_report, reports.hpp): one self-contained HTML file (inline
// style, the lab's figure inlined, no script, no link that needs a server or the network) with,
// per lab, the checks table and the graded source, each line annotated with the emulator's
// metrics of the measured run (the JSON report's `metrics`: sectors or wavefronts per request
// against the ideal, as a heat map) and marked where a failing check's message names it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "reports.hpp"

namespace gpulab::grade {
namespace {

namespace fs = std::filesystem;

/// Text as HTML shows it: the five characters HTML gives a meaning escaped.
std::string esc(const std::string& raw) {
  const std::string s = clean_text(raw);
  std::string o;
  o.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

double to_number(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return end != s.c_str() && std::isfinite(v) ? v : 0;
}

std::string three(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

/// One metrics row of the report (protocol fields after "metric": check, launch, file:line,
/// space, access, requests, per request, ideal per request, efficiency, lane stride).
struct Row {
  std::string file;
  int line = 0;
  std::string space, access;
  double requests = 0, per_request = 0, ideal = 0, efficiency = 1;
};

std::vector<Row> rows_of(const LabResult& l) {
  std::vector<Row> out;
  for (std::vector<std::string> m : l.metrics) {
    m.resize(std::max<std::size_t>(m.size(), 10));
    Row r;
    const auto colon = m[2].rfind(':');
    if (colon == std::string::npos) continue;
    r.file = m[2].substr(0, colon);
    r.line = std::atoi(m[2].c_str() + colon + 1);
    r.space = m[3];
    r.access = m[4];
    r.requests = to_number(m[5]);
    r.per_request = to_number(m[6]);
    r.ideal = to_number(m[7]);
    r.efficiency = m[8].empty() ? 1 : to_number(m[8]);
    out.push_back(r);
  }
  return out;
}

/// How far a line's accesses are from ideal, 0 (ideal) .. 1 (worst): its worst row's
/// 1 - efficiency (global: bytes used of bytes moved; shared: ideal wavefronts of those made).
double waste(const std::vector<const Row*>& rows) {
  double w = 0;
  for (const Row* r : rows) {
    const double e = r->space == "shared" && r->per_request > 0 ? r->ideal / r->per_request : r->efficiency;
    w = std::max(w, 1 - std::clamp(e, 0.0, 1.0));
  }
  return w;
}

std::string heat(double w) {  // white to red
  const int g = static_cast<int>(std::lround(255 - 150 * w)), b = static_cast<int>(std::lround(255 - 190 * w));
  char buf[64];
  std::snprintf(buf, sizeof buf, "background:rgb(255,%d,%d)", g, b);
  return buf;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The graded files: the report's `source` is one path or several joined by ", ".
std::vector<std::string> sources_of(const LabResult& l) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= l.source.size() && !l.source.empty()) {
    const std::size_t comma = l.source.find(", ", at);
    out.push_back(l.source.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 2;
  }
  return out;
}

/// Lines of `base` that a failing check's message names ("row_sum.cu:14"), with the checks.
std::map<int, std::vector<std::string>> named_lines(const LabResult& l, const std::string& base) {
  std::map<int, std::vector<std::string>> out;
  const std::regex at(std::regex_replace(base, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") + R"(:(\d+))");
  for (const Check& c : l.checks) {
    if (c.passed) continue;
    for (std::sregex_iterator it(c.message.begin(), c.message.end(), at), end; it != end; ++it) {
      auto& v = out[std::stoi((*it)[1].str())];
      if (std::find(v.begin(), v.end(), c.name) == v.end()) v.push_back(c.name);
    }
  }
  return out;
}

/// The file of this checkout at the place `path` has in its own (from its last "/labs/" or
/// "/solutions/" on); "" when there is none.
std::string this_checkouts_copy(const std::string& path) {
  for (const char* top : {"/solutions/", "/labs/"})
    if (const std::size_t at = path.rfind(top); at != std::string::npos) {
      const std::string copy = std::string(GPULAB_SOURCE_DIR) + path.substr(at);
      if (fs::is_regular_file(copy)) return copy;
    }
  return "";
}

void source_table(std::ostringstream& o, const LabResult& l, const std::string& path) {
  const std::string base = fs::path(path).filename().string();
  const std::vector<Row> rows = rows_of(l);
  std::map<int, std::vector<const Row*>> by_line;
  for (const Row& r : rows) {
    if (fs::path(r.file).filename().string() != base) continue;
    // The same access measured for two checks (one run): shown once.
    auto& v = by_line[r.line];
    const bool again = std::any_of(v.begin(), v.end(), [&](const Row* o) {
      return o->space == r.space && o->access == r.access && o->requests == r.requests && o->per_request == r.per_request;
    });
    if (!again) v.push_back(&r);
  }
  const auto named = named_lines(l, base);
  o << "<h3>" << esc(path) << "</h3>\n";
  if (rows.empty())
    o << "<p class=\"note\">No per-line metrics: "
      << (l.info.count("device") && l.info.at("device").find("emulator") == std::string::npos
              ? "a GPU grade measures times, not lines (grade with --backend emu for them)."
              : "the measured run did not happen, or this emulator build traces no accesses.")
      << "</p>\n";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    // A report made on another machine (a GPU's, a CI's) names its own checkout: this one's copy
    // of a lab or reference file is shown instead, and said to be.
    const std::string copy = this_checkouts_copy(path);
    if (!copy.empty()) in.open(copy, std::ios::binary);
    if (!in) {
      o << "<p class=\"note\">The file cannot be read here.</p>\n";
      return;
    }
    o << "<p class=\"note\">Not on this machine; shown from this checkout: " << esc(copy) << "</p>\n";
  }
  o << "<table class=\"src\"><tr><th class=\"n\">line</th><th>code</th><th class=\"m\">memory accesses (measured run)</th></tr>\n";
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    const auto m = by_line.find(n);
    const auto f = named.find(n);
    o << "<tr id=\"" << esc(base) << "-L" << n << "\"";
    if (m != by_line.end()) o << " class=\"annotated\" data-line=\"" << n << "\" style=\"" << heat(waste(m->second)) << "\"";
    if (f != named.end()) o << " data-finding=\"" << n << "\"";
    o << "><td class=\"n\">" << n << "</td><td><code>" << esc(text) << "</code></td><td class=\"m\">";
    if (m != by_line.end())
      for (const Row* r : m->second)
        o << "<div>" << esc(r->space + " " + r->access) << ": " << three(r->per_request) << " "
          << (r->space == "shared" ? "wavefronts" : "sectors") << "/request (ideal " << three(r->ideal) << "), "
          << three(r->requests) << " requests</div>";
    if (f != named.end())
      for (const std::string& check : f->second) o << "<div class=\"finding\">named by " << esc(check) << "</div>";
    o << "</td></tr>\n";
  }
  o << "</table>\n";
}

/// The lab's first figure (docs/figures/labNN-*.svg), inlined.
void figure(std::ostringstream& o, const std::string& lab) {
#ifdef GPULAB_SOURCE_DIR
  const fs::path dir = fs::path(GPULAB_SOURCE_DIR) / "docs" / "figures";
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".svg" && e.path().filename().string().rfind("lab" + lab.substr(0, 2) + "-", 0) == 0)
      found.push_back(e.path());
  std::sort(found.begin(), found.end());
  if (found.empty()) return;
  std::string svg = read_file(found.front().string());
  const auto start = svg.find("<svg");
  if (start == std::string::npos) return;
  o << "<figure>" << svg.substr(start) << "<figcaption>" << esc(found.front().filename().string())
    << " (the lesson's figure)</figcaption></figure>\n";
#else
  (void)o;
  (void)lab;
#endif
}

/// Where a lab was measured (the kit's info: device, driver, clocks, warp size), when it says.
void measured_on(std::ostringstream& o, const LabResult& l) {
  static const std::pair<const char*, const char*> kShown[] = {
      {"device", "device"}, {"driver", "driver"}, {"sm_clock_mhz", "SM clock, MHz"},
      {"memory_clock_mhz", "memory clock, MHz"}, {"warp_size", "warp size"}};
  std::string rows;
  for (const auto& [key, label] : kShown)
    if (auto it = l.info.find(key); it != l.info.end() && !it->second.empty())
      rows += std::string("<tr><th>") + label + "</th><td>" + esc(it->second) + "</td></tr>";
  if (!rows.empty()) o << "<table class=\"info\">" << rows << "</table>\n";
}

/// The performance checks' values against their thresholds, one bar each: on a GPU the ratios
/// measured in the run (of the copy kernel's bandwidth, of the vendor library), on the emulator
/// the counts and predictions its checks grade. The bar is the value, the line the threshold.
void measured_bars(std::ostringstream& o, const LabResult& l) {
  std::string bars;
  for (const Check& c : l.checks) {
    if (!is(c, CheckKind::performance) || c.value.empty() || c.threshold.empty()) continue;
    const double v = std::strtod(c.value.c_str(), nullptr), t = std::strtod(c.threshold.c_str(), nullptr);
    if (!std::isfinite(v) || !std::isfinite(t) || v < 0 || t <= 0) continue;  // "nan": no bar
    const double scale = std::max(v, t) * 1.15;
    auto percent = [&](double x) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "%.1f%%", 100 * x / scale);
      return std::string(buf);
    };
    bars += "<tr><td>" + esc(c.name.substr(c.name.find('.') + 1)) + "</td><td class=\"bar\"><div class=\"" +
            (c.passed ? "good" : "bad") + "\" style=\"width:" + percent(v) + "\"></div><div class=\"limit\" style=\"left:" +
            percent(t) + "\"></div></td><td>" + esc(c.value) + (c.unit.empty() ? "" : " " + esc(c.unit)) +
            " (threshold " + esc(c.threshold) + ")</td></tr>\n";
  }
  if (bars.empty()) return;
  o << "<h3>Measured against the thresholds</h3>\n<table class=\"measured\">\n" << bars << "</table>\n";
}

}  // namespace

std::string html_report(const Report& r) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>gpulab grade</title>\n<style>\n"
       "body{font-family:sans-serif;margin:1.5em;max-width:1400px}table{border-collapse:collapse;margin:.5em 0}"
       "td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top;text-align:left}"
       ".pass{color:#176b28;font-weight:bold}.fail{color:#b00020;font-weight:bold}"
       "pre{white-space:pre-wrap;margin:0;font-size:90%}table.src td{border:none;border-bottom:1px solid #eee}"
       "table.src{width:100%;table-layout:fixed}table.src code{white-space:pre-wrap;word-break:break-all}"
       ".n{color:#888;text-align:right;width:3.5em}.m{font-size:85%;width:24em}"
       ".finding{color:#b00020}.note{color:#555}figure svg{max-width:100%;height:auto}"
       "td.bar{position:relative;width:24em}td.bar div{height:1em}.good{background:#6bbf7b}.bad{background:#e07a7a}"
       "td.bar div.limit{position:absolute;top:0;bottom:0;width:2px;height:auto;background:#000}"
       "</style></head><body>\n";
  o << "<h1>gpulab grade: " << esc(r.backend) << " (" << esc(r.device) << ")</h1>\n<p>seed " << esc(r.seed)
    << (r.complete ? "" : " &mdash; grading did not finish") << "</p>\n";
  for (const LabResult& l : r.labs) {
    o << "<h2>" << esc(l.lab) << " <span class=\"" << (l.passed ? "pass\">passed" : "fail\">not passed") << "</span> "
      << three(l.score) << " / " << three(l.max_score) << " points</h2>\n";
    o << "<table class=\"checks\"><tr><th>check</th><th></th><th>value</th><th>threshold</th><th>points</th>"
         "<th>message</th></tr>\n";
    for (const Check& c : l.checks)
      o << "<tr><td>" << esc(c.name) << "</td><td class=\"" << (c.passed ? "pass\">pass" : "fail\">FAIL") << "</td><td>"
        << esc(c.value) << (c.unit.empty() ? "" : " " + esc(c.unit)) << "</td><td>" << esc(c.threshold) << "</td><td>"
        << three(c.points) << " / " << three(c.max_points) << "</td><td><pre>" << esc(c.message) << "</pre></td></tr>\n";
    o << "</table>\n";
    measured_on(o, l);
    measured_bars(o, l);
    for (const std::string& path : sources_of(l)) source_table(o, l, path);
    figure(o, l.lab);
  }
  o << "</body></html>\n";
  return o.str();
}

void write_html(const Report& r, const std::string& path) { write_file_atomically(path, html_report(r)); }

}  // namespace gpulab::grade
