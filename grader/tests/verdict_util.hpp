// What the end-to-end grader tests share: a submission's stated expectations, running the real
// grader on it, and reading its JSON report.
//
// Expectation lines in a submission (or in the CASE file of a hand-in folder):
//   // expect: correctness fail "substring of a failing check's message"
//   // expect: performance pass
//   // expect[emu]: sanitizer fail "race"        (only on that back-end)
//   // expect: lab pass
//   // expect: correctness.tile_multiples pass      (one check by name, at every warp size)
//   // expect: exit 2 "substring of the grader's output"   (the grader's exit status)
//   // expect: absent "text"                       (neither the report nor the grader's output
//                                                   holds it: what must never be shown)
//   // options: --timeout 10                       (extra grader options)
//   // defence: symbols,sandbox                    (adversarial suite: what stops it; "none": a
//                                                   fault with no switch, graded defended only)
//   // defence[cuda]: none                         (that back-end's own, e.g. where the GPU itself
//                                                   stops the cheat: a segfault, not a finding)
//   // limit: 30                                  (adversarial suite: seconds before the test stops
//                                                   the whole grade; default 120, 600 on a GPU)
// `fail` means at least one check of that kind failed (and, with a substring, that one failing
// check of that kind says it); `pass` means every check of that kind passed. A kind followed by
// `.name` is that one check (the report's row name without its " [warp N]" suffix).
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace verdict {

namespace fs = std::filesystem;

struct Expectation {
  std::string kind;  // correctness | performance | sanitizer | lab | exit
  bool pass = false;
  int exit_status = -1;
  std::string substring;
};

struct Stated {
  std::vector<Expectation> expect;
  std::string options;
  std::string defences;
  std::string report;  // "fifo", "symlink", "missing-dir": how the JSON path is spoiled
  /// `// needs: nvcc`: tools the stated verdict depends on (the emulator's lab 06 grade predicts
  /// from nvcc's registers, and says so and grades otherwise without it)
  std::vector<std::string> needs;
  /// `// limit: S`: seconds the whole grade may take before the test stops it, where the case knows
  /// the answer sooner than the default (a grade that blocks for ever without its defence)
  int limit = 0;
};

/// Whether this machine has a tool a case `needs` (the grader looks for nvcc in the same places).
inline bool has_tool(const std::string& tool) {
  if (tool == "nvcc") return fs::exists("/usr/local/cuda/bin/nvcc") || fs::exists("/usr/bin/nvcc");
  return false;
}

inline std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

/// Whether `line` can hold a `// key: ...` directive of a case file (expect, options, defence,
/// report, needs, limit): the regular expressions below run on those lines only. Every test
/// process of a suite parses every case file (gtest builds its parameters in each), and most of
/// their lines are code.
inline bool may_be_directive(const std::string& line) {
  if (line.find("//") == std::string::npos) return false;
  for (const char* key : {"expect", "options:", "defence", "report:", "needs:", "limit:"})
    if (line.find(key) != std::string::npos) return true;
  return false;
}

inline Stated parse(const std::string& text, const std::string& backend) {
  Stated s;
  static const std::regex expect_re(R"re(//\s*expect(\[(\w+)\])?:\s*(\w+(?:\.\w+)?)\s+(pass|fail|\d+)(\s+"([^"]*)")?)re");
  static const std::regex options_re(R"re(//\s*options:\s*(.*))re");
  static const std::regex defence_re(R"re(//\s*defence(\[(\w+)\])?:\s*([\w,-]+))re");
  bool defence_for_backend = false;  // `defence[cuda]: ...` wins over `defence: ...`
  static const std::regex report_re(R"re(//\s*report:\s*([\w-]+))re");
  static const std::regex needs_re(R"re(//\s*needs:\s*(\w+))re");
  static const std::regex limit_re(R"re(//\s*limit:\s*(\d+))re");
  static const std::regex absent_re(R"re(//\s*expect(\[(\w+)\])?:\s*absent\s+"([^"]*)")re");
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!may_be_directive(line)) continue;
    if (std::regex_search(line, m, absent_re)) {
      if (!m[2].matched || m[2].str() == backend) s.expect.push_back({"absent", false, -1, m[3].str()});
    } else if (std::regex_search(line, m, expect_re)) {
      if (m[2].matched && m[2].str() != backend) continue;
      Expectation e;
      e.kind = m[3].str();
      e.pass = m[4].str() == "pass";
      if (e.kind == "exit") e.exit_status = std::atoi(m[4].str().c_str());
      e.substring = m[6].matched ? m[6].str() : "";
      s.expect.push_back(e);
    } else if (std::regex_search(line, m, options_re)) {
      s.options += " " + m[1].str();
    } else if (std::regex_search(line, m, defence_re)) {
      if (m[2].matched && m[2].str() != backend) continue;
      if (defence_for_backend && !m[2].matched) continue;
      s.defences = m[3].str();
      defence_for_backend = m[2].matched;
    } else if (std::regex_search(line, m, report_re)) {
      s.report = m[1].str();
    } else if (std::regex_search(line, m, needs_re)) {
      s.needs.push_back(m[1].str());
    } else if (std::regex_search(line, m, limit_re)) {
      s.limit = std::atoi(m[1].str().c_str());
    }
  }
  return s;
}

/// Whether a report's check is what an expectation names: a kind ("correctness"), or one check
/// ("correctness.tile_multiples": the row "correctness.tile_multiples [warp 32]" and the like).
inline bool is_of(const nlohmann::json& check, const std::string& kind_or_check) {
  const auto dot = kind_or_check.find('.');
  if (dot == std::string::npos) return check.value("kind", "") == kind_or_check;
  if (check.value("kind", "") != kind_or_check.substr(0, dot)) return false;
  const std::string name = check.value("name", "");
  return name == kind_or_check || name.rfind(kind_or_check + " ", 0) == 0;
}

struct Outcome {
  int exit_status = -1;
  std::string log;          // the grader's console output
  nlohmann::json report;    // null when none could be read
};

/// Runs the grader; `env` is prepended to the command (e.g. "GPULAB_GRADER_DISABLE=symbols").
/// The grader's output goes to `log` (not beside the report: a case may spoil the report's path).
inline Outcome grade(const std::string& grader, const std::string& lab, const std::string& what,
                     const std::string& options, const std::string& env, const fs::path& json, const fs::path& log) {
  const std::string cmd = env + " " + grader + " grade " + lab + " " + what + " --timeout 60" + options + " --json '" +
                          json.string() + "' --junit '" + json.string() + ".xml' > '" + log.string() + "' 2>&1";
  Outcome o;
  const int rc = std::system(cmd.c_str());
  o.exit_status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  o.log = read(log);
  if (fs::is_regular_file(json)) o.report = nlohmann::json::parse(read(json), nullptr, false);
  return o;
}

/// Empty when the outcome meets every expectation; else what did not hold.
inline std::string unmet(const Outcome& o, const std::vector<Expectation>& expect) {
  std::ostringstream why;
  for (const auto& e : expect) {
    if (e.kind == "exit") {
      if (o.exit_status != e.exit_status) why << "exit status " << o.exit_status << ", expected " << e.exit_status << "\n";
      else if (!e.substring.empty() && o.log.find(e.substring) == std::string::npos)
        why << "the grader's output does not say \"" << e.substring << "\"\n";
      continue;
    }
    if (e.kind == "absent") {
      if (o.log.find(e.substring) != std::string::npos || o.report.dump().find(e.substring) != std::string::npos)
        why << "the grader shows \"" << e.substring << "\"\n";
      continue;
    }
    if (!o.report.is_object() || !o.report.contains("labs") || o.report["labs"].empty()) {
      why << "no readable JSON report (exit " << o.exit_status << ")\n";
      continue;
    }
    const auto& lab = o.report["labs"][0];
    if (e.kind == "lab") {
      if (lab.value("passed", false) != e.pass) why << "lab " << (e.pass ? "failed" : "passed") << "\n";
      continue;
    }
    bool any = false, all_pass = true, said = e.substring.empty();
    for (const auto& c : lab.value("checks", nlohmann::json::array())) {
      if (!is_of(c, e.kind)) continue;
      any = true;
      const bool passed = c.value("passed", false);
      all_pass = all_pass && passed;
      if (!passed && c.value("message", "").find(e.substring) != std::string::npos) said = true;
    }
    if (!any) why << "no " << e.kind << " check in the report\n";
    else if (e.pass && !all_pass) why << "a " << e.kind << " check failed\n";
    else if (!e.pass && all_pass) why << "every " << e.kind << " check passed\n";
    else if (!e.pass && !said) why << "no failing " << e.kind << " check says \"" << e.substring << "\"\n";
  }
  return why.str();
}

}  // namespace verdict
