#include "reports.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace gpulab::grade {
namespace {

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      case '\r': o += "\\r"; break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o + "\"";
}

/// A number stays a JSON number; anything else ("nan", "inf") becomes null.
std::string json_number(const std::string& s) {
  if (s.empty()) return "null";
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end || v != v || v - v != 0) return "null";
  return s;
}

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

std::string xml(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    switch (c) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      default:
        if (c < 0x20 && c != '\n' && c != '\t') o += ' ';
        else o += static_cast<char>(c);
    }
  }
  return o;
}

std::string value_text(const Check& c) {
  if (c.value.empty()) return "";
  std::string s = c.value + (c.unit.empty() ? "" : " " + c.unit);
  if (!c.threshold.empty()) s += " (threshold " + c.threshold + ")";
  return s;
}

}  // namespace

void print_table(const Report& r, bool colour) {
  const char* green = colour ? "\033[32m" : "";
  const char* red = colour ? "\033[31m" : "";
  const char* bold = colour ? "\033[1m" : "";
  const char* reset = colour ? "\033[0m" : "";
  std::printf("\n%sgpulab grade%s  back-end %s (%s), seed %s (reproduce with --seed %s)\n", bold, reset,
              r.backend.c_str(), r.device.c_str(), r.seed.c_str(), r.seed.c_str());
  double score = 0, max = 0;
  for (const auto& lab : r.labs) {
    std::printf("\n%s%s%s  [%s: %s]  %s / %s points  %s%s%s\n", bold, lab.lab.c_str(), reset,
                lab.impl.c_str(), lab.source.c_str(), fmt(lab.score).c_str(), fmt(lab.max_score).c_str(),
                lab.passed ? green : red, lab.passed ? "PASSED" : "FAILED", reset);
    for (const auto& c : lab.checks) {
      std::printf("  %s%s%s  %-52s %-34s %s/%s\n", c.passed ? green : red, c.passed ? "pass" : "FAIL", reset,
                  c.name.c_str(), value_text(c).c_str(), fmt(c.points).c_str(), fmt(c.max_points).c_str());
      if (!c.message.empty() && (!c.passed || c.kind == "performance")) {
        std::istringstream in(c.message);
        std::string line;
        while (std::getline(in, line)) std::printf("        %s\n", line.c_str());
      }
    }
    score += lab.score;
    max += lab.max_score;
  }
  std::printf("\n%sTotal: %s / %s points — %s%s%s\n", bold, fmt(score).c_str(), fmt(max).c_str(),
              r.passed() ? green : red, r.passed() ? "all graded labs passed" : "not all checks passed", reset);
}

void write_json(const Report& r, const std::string& path) {
  std::ostringstream o;
  double score = 0, max = 0;
  for (const auto& l : r.labs) {
    score += l.score;
    max += l.max_score;
  }
  o << "{\n  \"backend\": " << json_string(r.backend) << ",\n  \"device\": " << json_string(r.device)
    << ",\n  \"seed\": " << json_string(r.seed) << ",\n  \"passed\": " << (r.passed() ? "true" : "false")
    << ",\n  \"score\": " << fmt(score) << ",\n  \"max_score\": " << fmt(max) << ",\n  \"labs\": [";
  for (std::size_t i = 0; i < r.labs.size(); ++i) {
    const auto& l = r.labs[i];
    o << (i ? "," : "") << "\n    {\"lab\": " << json_string(l.lab) << ", \"impl\": " << json_string(l.impl)
      << ", \"source\": " << json_string(l.source) << ", \"passed\": " << (l.passed ? "true" : "false")
      << ", \"score\": " << fmt(l.score) << ", \"max_score\": " << fmt(l.max_score) << ",\n     \"info\": {";
    std::size_t k = 0;
    for (const auto& [key, value] : l.info) o << (k++ ? ", " : "") << json_string(key) << ": " << json_string(value);
    o << "},\n     \"metrics\": [";
    for (std::size_t j = 0; j < l.metrics.size(); ++j) {
      const auto& m = l.metrics[j];
      o << (j ? "," : "") << "\n       {\"check\": " << json_string(m[0]) << ", \"launch\": " << json_string(m[1])
        << ", \"line\": " << json_string(m[2]) << ", \"space\": " << json_string(m[3])
        << ", \"access\": " << json_string(m[4]) << ", \"requests\": " << json_number(m[5])
        << ", \"per_request\": " << json_number(m[6]) << ", \"ideal_per_request\": " << json_number(m[7])
        << ", \"efficiency\": " << json_number(m[8]) << ", \"lane_stride_bytes\": " << json_number(m[9]) << "}";
    }
    o << "],\n     \"checks\": [";
    for (std::size_t j = 0; j < l.checks.size(); ++j) {
      const auto& c = l.checks[j];
      o << (j ? "," : "") << "\n       {\"name\": " << json_string(c.name) << ", \"kind\": " << json_string(c.kind)
        << ", \"passed\": " << (c.passed ? "true" : "false") << ", \"value\": " << json_number(c.value)
        << ", \"threshold\": " << json_number(c.threshold) << ", \"unit\": " << json_string(c.unit)
        << ", \"points\": " << fmt(c.points) << ", \"max_points\": " << fmt(c.max_points)
        << ", \"message\": " << json_string(c.message) << "}";
    }
    o << "]}";
  }
  o << "\n  ]\n}\n";
  std::ofstream(path) << o.str();
}

void write_junit(const Report& r, const std::string& path) {
  std::ostringstream o;
  int tests = 0, failures = 0;
  for (const auto& l : r.labs)
    for (const auto& c : l.checks) {
      ++tests;
      failures += !c.passed;
    }
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gpulab\" tests=\"" << tests
    << "\" failures=\"" << failures << "\">\n";
  for (const auto& l : r.labs) {
    int f = 0;
    for (const auto& c : l.checks) f += !c.passed;
    o << "  <testsuite name=\"" << xml(l.lab + " (" + l.impl + ", " + r.backend + ")") << "\" tests=\""
      << l.checks.size() << "\" failures=\"" << f << "\">\n";
    for (const auto& c : l.checks) {
      o << "    <testcase classname=\"" << xml(l.lab + "." + c.kind) << "\" name=\"" << xml(c.name) << "\"";
      if (c.passed) {
        o << "/>\n";
      } else {
        o << ">\n      <failure message=\"" << xml(c.message.substr(0, c.message.find('\n'))) << "\">"
          << xml(c.message + (c.value.empty() ? "" : "\nvalue: " + value_text(c))) << "</failure>\n    </testcase>\n";
      }
    }
    o << "  </testsuite>\n";
  }
  o << "</testsuites>\n";
  std::ofstream(path) << o.str();
}

void append_github_summary(const Report& r, const std::string& path) {
  std::ofstream o(path, std::ios::app);
  o << "## gpulab grade (" << r.backend << ", " << r.device << ", seed " << r.seed << ")\n\n";
  o << "| lab | check | result | value | points |\n|---|---|---|---|---|\n";
  for (const auto& l : r.labs)
    for (const auto& c : l.checks)
      o << "| " << l.lab << " | " << c.name << " | " << (c.passed ? "pass" : "**fail**") << " | "
        << value_text(c) << " | " << fmt(c.points) << "/" << fmt(c.max_points) << " |\n";
  o << "\n";
}

}  // namespace gpulab::grade
