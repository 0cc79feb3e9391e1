#include "gpu_sanitizer.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

namespace gpulab::grade {
namespace {

namespace fs = std::filesystem;

bool executable(const fs::path& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p); }

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

/// "rows(const float *, float *, int)+0x1f0" -> "rows"
std::string kernel_name(std::string f) {
  const auto plus = f.rfind("+0x");
  if (plus != std::string::npos) f.erase(plus);
  const auto paren = f.find('(');
  if (paren != std::string::npos && paren > 0) f.erase(paren);
  return f;
}

struct Record {
  std::string head;                   // the first line: what happened
  std::vector<std::string> details;   // the indented lines after it
};

std::string kind_of(const std::string& tool, const std::string& head) {
  if (starts_with(head, "Program hit")) return "api-error";
  if (tool == "racecheck") return "race";
  if (tool == "synccheck") return head.find("ivergent") != std::string::npos ? "divergent-barrier" : "barrier";
  if (tool == "initcheck") return "uninitialised-read";
  if (head.find("isaligned") != std::string::npos) return "misaligned-access";
  if (head.find("Invalid") != std::string::npos || head.find("out of bounds") != std::string::npos)
    return "out-of-bounds";
  return "memory-error";
}

}  // namespace

std::string find_compute_sanitizer() {
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string d; std::getline(dirs, d, ':');)
      if (!d.empty() && executable(fs::path(d) / "compute-sanitizer")) return (fs::path(d) / "compute-sanitizer").string();
  }
  for (const char* p : {"/usr/local/cuda/bin/compute-sanitizer", "/usr/local/cuda/compute-sanitizer/compute-sanitizer",
                        "/opt/cuda/bin/compute-sanitizer"})
    if (executable(p)) return p;
  return "";
}

const std::vector<std::string>& compute_sanitizer_tools() {
  static const std::vector<std::string> tools{"memcheck", "racecheck", "synccheck", "initcheck"};
  return tools;
}

namespace {

/// compute-sanitizer's output as read: its records (each finding's lines) and the errors its summary lines count.
struct SanitizerOutput {
  std::vector<Record> records;
  long long summary_errors = 0;
};

/// The records and summary counts of compute-sanitizer's `output`.
SanitizerOutput read_output(const std::string& output) {
  // Each line of the report starts with "=========": a finding's first line has one space after
  // it, its details more.
  SanitizerOutput report;
  std::vector<Record>& records = report.records;
  std::istringstream in(output);
  const std::regex summary(R"re((ERROR SUMMARY|RACECHECK SUMMARY): (\d+))re");
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!starts_with(line, "=========")) continue;
    std::string text = line.substr(9);
    if (std::regex_search(text, m, summary)) {
      report.summary_errors += std::atoll(m[2].str().c_str());
      continue;
    }
    const std::size_t indent = text.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    text.erase(0, indent);
    if (indent <= 1) {
      if (starts_with(text, "COMPUTE-SANITIZER") || starts_with(text, "Target application") ||
          starts_with(text, "LEAK SUMMARY") || starts_with(text, "Saved host backtrace") ||
          text.find("buffer overflow has been detected") != std::string::npos ||
          text.find("errors were skipped") != std::string::npos)  // the tool's own limit
        continue;
      records.push_back({text, {}});
    } else if (!records.empty() && !starts_with(text, "Saved host backtrace") && !starts_with(text, "Host Frame")) {
      records.back().details.push_back(text);
    }
  }
  return report;
}

/// A record as a finding: its kind, its message, and the key that identical findings share.
struct Finding {
  std::string kind, message, key;
};

/// The finding that `tool`'s record `r` reports.
Finding finding_of(const std::string& tool, const Record& r) {
  static const std::regex at(R"re(^(?:and )?(\w+ access )?at (.*) in (.*):(\d+)( \[(\d+) hazards?\])?$)re");
  static const std::regex by(R"re(^by thread \(([^)]*)\) in block \(([^)]*)\))re");
  static const std::regex race(
      R"re(^(?:Error: |Warning: )?Race reported between (\w+) access at (.*) in (.*):(\d+)$)re");
  std::smatch m;
  const std::string kind = kind_of(tool, r.head);
  std::string what = r.head, where, kernel, who, extra;
  long long hazards = 0;
  if (std::regex_match(r.head, m, race)) {
    what = m[1].str() + " at " + m[3].str() + ":" + m[4].str();
    kernel = kernel_name(m[2].str());
    where = m[3].str() + ":" + m[4].str();
  }
  for (const auto& d : r.details) {
    if (std::regex_match(d, m, at)) {
      if (kind == "race" && !where.empty()) {
        const std::string other = " and " +
                                  (m[1].matched ? m[1].str().substr(0, m[1].str().size() - 8) : std::string("access")) +
                                  " at " + m[3].str() + ":" + m[4].str();
        if (what.find(other) == std::string::npos) what += other;  // one mention per access
        if (m[6].matched) hazards += std::atoll(m[6].str().c_str());
      } else if (where.empty()) {
        kernel = kernel_name(m[2].str());
        where = m[3].str() + ":" + m[4].str();
      }
    } else if (std::regex_search(d, m, by)) {
      if (who.empty()) who = "block (" + m[2].str() + "), thread (" + m[1].str() + ")";
    } else if (extra.size() < 300) {
      extra += (extra.empty() ? "" : "; ") + d;
    }
  }
  if (starts_with(what, "Error: ")) what.erase(0, 7);
  const std::string named = kind == "out-of-bounds" && extra.find("misaligned") != std::string::npos
                                ? std::string("misaligned-access") : kind;
  std::string message = kind == "race" ? "shared memory: " + what : what + (where.empty() ? "" : " at " + where);
  if (!kernel.empty()) message += " (kernel " + kernel + (who.empty() ? "" : ", " + who) + ")";
  else if (!who.empty()) message += " (" + who + ")";
  if (!extra.empty()) message += ": " + extra;
  if (hazards > 0) message += " [" + std::to_string(hazards) + " hazards]";
  return {named, message, named + "|" + r.head + "|" + where};
}

/// The one finding of a report whose `summary_errors` errors were in no form read_output reads.
nlohmann::json unread_errors(const std::string& tool, const std::string& output, long long summary_errors) {
  // Errors counted but not in a form read above: say so with the report's first lines.
  std::string first;
  std::istringstream again(output);
  for (std::string line; std::getline(again, line) && first.size() < 400;)
    if (starts_with(line, "=========") && line.find("COMPUTE-SANITIZER") == std::string::npos)
      first += (first.empty() ? "" : " | ") + line.substr(9);
  return {{"kind", tool + "-error"},
          {"message", std::to_string(summary_errors) + " error(s) reported by " + tool + ": " + first},
          {"count", summary_errors},
          {"tool", tool}};
}

}  // namespace

nlohmann::json parse_compute_sanitizer(const std::string& tool, const std::string& output) {
  const SanitizerOutput report = read_output(output);
  // Each record as a finding; identical ones (same kind, what and where) collapsed.
  std::map<std::string, std::size_t> index;
  nlohmann::json findings = nlohmann::json::array();
  for (const Record& r : report.records) {
    const Finding f = finding_of(tool, r);
    const auto it = index.find(f.key);
    if (it != index.end()) {
      findings[it->second]["count"] = findings[it->second]["count"].get<long long>() + 1;
      continue;
    }
    index[f.key] = findings.size();
    findings.push_back({{"kind", f.kind}, {"message", f.message}, {"count", 1}, {"tool", tool}});
  }
  if (findings.empty() && report.summary_errors > 0)
    findings.push_back(unread_errors(tool, output, report.summary_errors));
  return findings;
}

}  // namespace gpulab::grade
