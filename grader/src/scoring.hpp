// The verdicts of a lab's grade: the plan of checks its judge lists, the verdicts it reports, and
// how they become points (a planned check without a verdict fails, speed counts only for a
// correct kernel, a tampered record fails everything, the rubric's points per kind).
#pragma once

#include <string>
#include <vector>

#include "gpulab/grade/rubric.hpp"
#include "model.hpp"
#include "process.hpp"
#include "types.hpp"

namespace gpulab::grade {

/// A check the judge lists, and its kind (the check's GoogleTest suite).
struct PlannedCheck {
  std::string name;
  CheckKind kind;
};
using Plan = std::vector<PlannedCheck>;

Check failed_check(const std::string& name, CheckKind kind, const std::string& message);

/// The checks of a lab, from its judge (trusted: the reference solution's executable).
Plan planned_checks(const std::string& judge, const std::string& rubric);

/// Reads the judge's report (gpulab/grade/protocol.hpp) into `out`, with `suffix` on each name.
/// `keep_metrics`: take its metric rows (all of them); only the first run's are reported, since
/// the later warp sizes run no performance check.
void collect(const std::string& report_path, const std::string& suffix, const ProcessResult& judge, LabResult& out,
             bool keep_metrics);

/// Holds the verdicts to the plan: every planned check exactly once (performance checks at the
/// first suffix only).
void complete_plan(const Plan& plan, const std::vector<std::string>& suffixes, LabResult& r);

/// Speed is graded only for a kernel that is right.
void grade_performance_of_correct_kernels_only(LabResult& r);

/// A record the judge found tampered with fails every check of the lab.
void fail_all_if_tampered(LabResult& r);

/// Points: the rubric's [points] per kind, shared equally by the checks of that kind.
void score(const Rubric& rubric, LabResult& r);

}  // namespace gpulab::grade
