// gpulab/grade/harness.hpp - what a lab's checks (grader/labs/NN-name/checks.cpp) use.
//
// A lab's checks are GoogleTest tests in the suites `correctness`, `performance` and
// `sanitizer`; each test is one check of the report. They call the code under test through the
// lab kit (gpulab/grade/kit.hpp), and run twice: in the runner (sandboxed, with the code under
// test; it only records what the code did) and in the judge (trusted; it replays the record and
// reports each check's verdict, value, threshold and message).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpulab/grade/rubric.hpp"

namespace gpulab::grade {

struct Options {
  std::uint64_t seed = 0;        ///< base seed of this run (printed; --seed reproduces)
  int warp_size = 0;             ///< emulator warp size of this run (0 = the device's)
  bool performance = true;       ///< false: skip the performance checks (second warp size)
  std::string rubric_path;
  std::string report_path;
  std::string impl = "student";  ///< what is graded: student, solution or submission
  int channel_fd = -1;           ///< runner: where the record goes (gpulab/grade/kit.hpp)
  int record_key_fd = -1;        ///< runner: where the key of the record's tags is read, once
  std::string replay_path;       ///< judge: the runner's record
  std::string record_key;        ///< judge: the key of the record's tags (hex; none: not checked)
  std::string runner_status;     ///< judge: how the runner ended
  std::string gpu_findings_path; ///< judge on a GPU back-end: the GPU sanitizer's findings (JSON)
  /// judge on the emu back-end: registers and shared memory of the kernels under test, from nvcc
  /// run by the grader (JSON; see kit::kernel_resources)
  std::string kernel_resources_path;
};
const Options& options();
const Rubric& rubric();

/// Section of the rubric for this back-end: "performance.emu", "performance.cuda", ...
std::string backend_section(const std::string& kind);

/// The running check's name ("suite.name"; the last one's between checks).
const std::string& current_check();

/// A generator seeded from the run's seed and the current check's name: each check draws
/// fresh inputs every run, and `--seed` reproduces any one of them.
std::mt19937_64 rng();

/// Attaches the measured value and its threshold to the running check (shown in the report).
void record(double value, double threshold, const std::string& unit = "");
/// The same for a check of several calls: the value recorded so far with the same unit plus
/// `value` (record_sum: wrong calls, wrong keys) or the larger of the two (record_max: the worst
/// error ratio), so that a later passing call does not hide an earlier failing one.
void record_sum(double value, double threshold, const std::string& unit);
void record_max(double value, double threshold, const std::string& unit);
/// Attaches a message shown even when the check passes (e.g. "42.1 GB/s = 0.61 of copy").
void note(const std::string& text);
/// Extra information for the report (not a check): device name, clocks, metric tables.
void info(const std::string& key, const std::string& value);

/// For `./gpulab calibrate`: the rubric value `key` of this back-end's performance section that
/// this measurement suggests when the reference solution is graded: `measured * factor`
/// (e.g. 0.85: students must reach 85% of what the reference reaches on this GPU).
void suggest_threshold(const std::string& key, double measured, double factor);

/// The verdict a performance check ends with: `value` recorded against `threshold` in `unit`;
/// for `./gpulab calibrate` the rubric key suggest() names, at value * factor; then the check
/// fails with `text` followed by `failure` (what was expected and a hint) when the value is below
/// the threshold (above it after at_most()), and otherwise notes `text`. Returns whether it passed.
///   Measured(eff, min_eff, "load efficiency").suggest("min_load_efficiency", 0.8).judge(text, "\n  hint: ...");
class Measured {
 public:
  Measured(double value, double threshold, std::string unit);
  Measured& suggest(std::string key, double factor);
  Measured& at_most();
  /// The check fails also when `failed`: a second condition the recorded value does not show
  /// (e.g. lab 06's traffic rule records bytes per FMA, and fails on bank conflicts too).
  Measured& fails_if(bool failed);
  bool judge(const std::string& text, const std::string& failure) const;

 private:
  double value_, threshold_;
  std::string unit_, suggest_key_;
  double factor_ = 0;
  bool at_most_ = false;
  bool failed_ = false;
};

/// Marks the running check as not measured: it fails with `why` and what to do instead.
void not_measured(const std::string& why);

/// Called by the lab kit when a call broke a rule every lab shares (it also fails the check):
/// a failed check with a recorded value then says, above its messages, that the value does not
/// count such calls (else a report could read "FAIL ... 0 wrong calls" with no word of why).
void rule_broken();

/// A row of the emulator's per-line metrics for the report (protocol fields after the check's
/// name: launch, file:line, global|shared, load|store|atomic, requests, per request, ideal per
/// request, efficiency, lane stride).
void emit_metric(const std::vector<std::string>& fields);

}  // namespace gpulab::grade
