// The grader's view of a grading run: labs, their checks, points. It is what the reports write,
// so its back-end, implementation and check kinds are their names (types.hpp gives them).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "types.hpp"

namespace gpulab::grade {

struct Check {
  std::string name;
  std::string kind;  ///< name(CheckKind): correctness | performance | sanitizer | portability (GPU grades)
  bool passed = false;
  std::string value;      ///< number as text, empty when none
  std::string threshold;  ///< number as text, empty when none
  std::string unit;
  std::string message;
  double points = 0;
  double max_points = 0;
};

struct LabResult {
  std::string lab;
  std::string impl;    ///< name(Impl): student | solution | submission
  std::string source;  ///< the file(s) graded
  /// How the code under test was isolated: "bubblewrap" (read-only tree, own PID/network/IPC
  /// namespaces, clean environment, rlimits) or "rlimits" (process group + rlimits + a separate
  /// build directory, where bubblewrap cannot run); empty when nothing ran.
  std::string isolation;
  /// false only in the "grading incomplete" report written before grading: planned, not graded.
  bool graded = true;
  bool passed = false;
  double score = 0;
  double max_score = 0;
  std::vector<Check> checks;
  std::map<std::string, std::string> info;
  /// Emulator metrics rows (protocol fields after "metric"), from the first warp size's run.
  std::vector<std::vector<std::string>> metrics;
  /// Wall-clock seconds per phase of the grade (build, run, sanitizer, judge, portability): where
  /// a grade's time goes, for instructors sizing a class run. Not part of any verdict.
  std::map<std::string, double> seconds;
};

/// Whether a check is of kind `k`.
inline bool is(const Check& c, CheckKind k) { return c.kind == name(k); }

struct Report {
  std::string backend;  ///< name(Backend)
  std::string device;
  std::string seed;
  /// false in the report written before grading starts (and rewritten after each lab), so that
  /// a grader that dies leaves a report saying grading did not finish.
  bool complete = true;
  std::vector<LabResult> labs;
  bool passed() const {
    for (const auto& l : labs)
      if (!l.passed) return false;
    return !labs.empty();
  }
};

/// A lab as the build recorded it (<build>/gpulab-labs.tsv).
struct LabInfo {
  std::string id;  ///< e.g. 01-coalescing
  std::string lab_dir, solution_dir, submission_dir, rubric;
  std::vector<std::string> sources;
  std::vector<std::string> functions;  ///< the contract's functions the code under test defines
};

}  // namespace gpulab::grade
