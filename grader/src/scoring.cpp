// The verdicts of a lab's grade (scoring.hpp): the judge's plan and report, held to each other,
// then the rules that cut across checks, then points.
#include "scoring.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "gpulab/grade/defences.hpp"
#include "gpulab/grade/protocol.hpp"

namespace gpulab::grade {

Check failed_check(const std::string& name, CheckKind kind, const std::string& message) {
  Check c;
  c.name = name;
  c.kind = grade::name(kind);
  c.passed = false;
  c.message = message;
  return c;
}

void collect(const std::string& report_path, const std::string& suffix, const ProcessResult& judge, LabResult& out,
             bool keep_metrics) {
  std::ifstream in(report_path);
  std::string line;
  while (std::getline(in, line)) {
    const auto f = protocol::split(line);
    if (f.empty()) continue;
    if (f[0] == "info" && f.size() >= 3) out.info[f[1]] = f[2];
    else if (f[0] == "metric" && f.size() >= 11 && keep_metrics) out.metrics.emplace_back(f.begin() + 1, f.end());
    else if (f[0] == "check" && f.size() >= 8) {
      Check c;
      c.name = f[1] + suffix;
      c.kind = f[2];
      c.passed = f[3] == "1";
      c.value = f[4];
      c.threshold = f[5];
      c.unit = f[6];
      c.message = f[7];
      out.checks.push_back(c);
    }
  }
  // The judge exits with 1 when a check failed: only a crash or a time-out is its own failure.
  if (judge.timed_out || judge.signal || (judge.exit_code != 0 && judge.exit_code != 1))
    out.info["judge_error" + suffix] = judge.describe() + ": " + tail_lines(judge.output, 8);
}

Plan planned_checks(const std::string& judge, const std::string& rubric) {
  const ProcessResult r = run_process({judge, "--rubric", rubric, "--gtest_list_tests"}, {}, 120);
  if (!r.ok()) throw std::runtime_error("cannot list the checks of " + judge + ": " + tail_lines(r.output, 8));
  Plan plan;
  std::istringstream in(r.output);
  std::string line, suite;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] != ' ') {
      suite = line.substr(0, line.find('.'));
    } else if (!suite.empty()) {
      std::string name = line.substr(line.find_first_not_of(' '));
      name = name.substr(0, name.find_first_of(" #"));
      const std::optional<CheckKind> kind = parse_check_kind(suite);
      if (!kind) throw std::runtime_error(judge + " lists " + suite + "." + name + ", of no known kind (grader/src/types.hpp)");
      plan.push_back({suite + "." + name, *kind});
    }
  }
  if (plan.empty()) throw std::runtime_error(judge + " lists no checks");
  return plan;
}

/// Holds the verdicts to the plan: every planned check exactly once. A planned check without a
/// verdict fails; a verdict for a check that was not planned, or a second one, is a failure of
/// its own (the judge is trusted, so this only guards against grader bugs).
void complete_plan(const Plan& plan, const std::vector<std::string>& suffixes, LabResult& r) {
  std::map<std::string, CheckKind> expected;  // name + suffix -> kind
  for (std::size_t w = 0; w < suffixes.size(); ++w)
    for (const auto& [name, kind] : plan)
      if (w == 0 || kind != CheckKind::performance) expected[name + suffixes[w]] = kind;
  std::map<std::string, int> seen;
  std::vector<Check> kept;
  for (auto& c : r.checks) {
    const auto it = expected.find(c.name);
    if (it == expected.end() && defence_enabled("plan")) {
      kept.push_back(failed_check(c.name, CheckKind::correctness, "a verdict for a check that was not planned"));
      continue;
    }
    if (seen[c.name]++ && defence_enabled("plan")) continue;  // the first verdict counts
    if (it != expected.end()) c.kind = name(it->second);      // points follow the plan's kind
    kept.push_back(c);
  }
  for (const auto& [name, kind] : expected)
    if (!seen.count(name)) {
      std::string why = "not run: no verdict was reported for it";
      const auto err = std::find_if(r.info.begin(), r.info.end(),
                                    [](const auto& kv) { return kv.first.rfind("judge_error", 0) == 0; });
      if (err != r.info.end()) why += " (the judge " + err->second + ")";
      kept.push_back(failed_check(name, kind, why));
    }
  r.checks = kept;
}

void score(const Rubric& rubric, LabResult& r) {
  std::map<std::string, int> count;
  for (const auto& c : r.checks) ++count[c.kind];
  r.score = r.max_score = 0;
  r.passed = !r.checks.empty();
  for (auto& c : r.checks) {
    const double points = rubric.number_or("points", c.kind, 1.0);
    c.max_points = points / count[c.kind];
    c.points = c.passed ? c.max_points : 0;
    r.score += c.points;
    r.max_score += c.max_points;
    r.passed = r.passed && c.passed;
  }
}

/// A record the judge found tampered with (an event not tagged with the run's key, or out of the
/// kit's order) says nothing about the code under test: every check of the lab fails, those the
/// judge did not decide too.
void fail_all_if_tampered(LabResult& r) {
  for (const auto& [key, why] : r.info) {
    if (key.rfind("record_tampered", 0) != 0) continue;
    for (auto& c : r.checks)
      if (c.passed || c.message.find("tampered") == std::string::npos) {
        c.passed = false;
        c.value.clear();
        c.message = "the record was tampered with: " + why;
      }
    return;
  }
}

/// Speed is graded only for a kernel that is right: a performance check whose run (same warp size
/// or back-end) has a failing correctness check, or sanitizer findings, is not graded.
void grade_performance_of_correct_kernels_only(LabResult& r) {
  const auto suffix = [](const std::string& name) {
    const auto b = name.find(" [");
    return b == std::string::npos ? std::string() : name.substr(b);
  };
  for (auto& p : r.checks) {
    if (!is(p, CheckKind::performance) || !p.passed) continue;
    std::vector<std::string> wrong;
    for (const auto& c : r.checks) {
      if (c.passed || suffix(c.name) != suffix(p.name)) continue;
      const bool found = is(c, CheckKind::sanitizer) && !c.value.empty() && std::atof(c.value.c_str()) > 0;
      if (is(c, CheckKind::correctness) || found) wrong.push_back(c.name);
    }
    if (wrong.empty()) continue;
    std::string list;
    for (std::size_t i = 0; i < wrong.size() && i < 3; ++i) list += (i ? ", " : "") + wrong[i];
    if (wrong.size() > 3) list += " and " + std::to_string(wrong.size() - 3) + " more";
    p.passed = false;
    p.message = "not graded: the kernel is not correct (" + list + " failed); speed counts only for a correct kernel" +
                (p.message.empty() ? "" : "\n" + p.message);
  }
}

}  // namespace gpulab::grade
