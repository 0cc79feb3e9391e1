// gpulab-grade: builds each lab's implementation against the pristine checks, runs the checks
// in a child process with a time limit, and reports. Usually started through ./gpulab.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "labs.hpp"
#include "reports.hpp"

using namespace gpulab::grade;

namespace {

const char* kUsage =
    "usage: gpulab grade [LAB...] [options]      grade labs (no LAB: all of them)\n"
    "       gpulab list                          the labs this build knows\n"
    "options:\n"
    "  --impl student|solution   grade the file you edit in labs/ (default) or the reference\n"
    "  --submission PATH         grade PATH instead: a lab's file, or a directory laid out like\n"
    "                            the repository (labs/NN-name/...); the working tree is not touched\n"
    "  --warp-size 32|64         emulator: run the checks at this warp size only (default: both)\n"
    "  --seed N                  reuse the random inputs of an earlier run\n"
    "  --json FILE               write a machine-readable report (schema: docs/report-format.md)\n"
    "  --junit FILE              write JUnit XML (one test case per check) for CI\n"
    "  --timeout SECONDS         time limit of each lab process (default: the lab's rubric)\n"
    "  --verbose                 show the build and the lab processes' output\n";

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "gpulab grade: %s\n\n%s", why.c_str(), kUsage);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::printf("%s", kUsage);
    return args.empty() ? 2 : 0;
  }
  const std::string command = args[0];
  GradeOptions opt;
  opt.backend = GPULAB_DEFAULT_BACKEND;
  opt.build_dir = GPULAB_BUILD_DIR;
  const auto labs = read_manifest(opt.build_dir);
  if (labs.empty()) usage_error("no labs recorded in " + opt.build_dir + "/gpulab-labs.tsv: configure the build first");

  if (command == "list") {
    for (const auto& l : labs) std::printf("%s\t%s\n", l.id.c_str(), l.lab_dir.c_str());
    return 0;
  }
  if (command != "grade") usage_error("unknown command '" + command + "'");

  std::vector<std::string> names;
  std::string json, junit;
  int warp = 0;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) usage_error("missing value after " + a);
      return args[++i];
    };
    if (a == "--impl") opt.impl = value();
    else if (a == "--submission") opt.submission = value();
    else if (a == "--warp-size") warp = std::atoi(value().c_str());
    else if (a == "--seed") opt.seed = value();
    else if (a == "--json") json = value();
    else if (a == "--junit") junit = value();
    else if (a == "--timeout") opt.timeout_override = std::atof(value().c_str());
    else if (a == "--verbose") opt.verbose = true;
    else if (!a.empty() && a[0] == '-') usage_error("unknown option " + a);
    else names.push_back(a);
  }
  if (!opt.submission.empty()) {
    if (opt.impl == "solution") usage_error("--submission and --impl solution exclude each other");
    opt.impl = "submission";
    if (access(opt.submission.c_str(), R_OK) != 0) usage_error("cannot read the submission " + opt.submission);
  }
  if (opt.impl != "student" && opt.impl != "solution" && opt.impl != "submission")
    usage_error("--impl takes student or solution");
  if (warp != 0 && warp != 32 && warp != 64) usage_error("--warp-size takes 32 or 64");
  if (opt.backend == "emu") opt.warp_sizes = warp ? std::vector<int>{warp} : std::vector<int>{32, 64};
  else {
    if (warp) std::fprintf(stderr, "gpulab grade: --warp-size applies to the emulator; the GPU's warp size is used\n");
    opt.warp_sizes = {0};
  }
  if (opt.seed.empty()) opt.seed = std::to_string(std::random_device{}() % 1000000000u);

  std::vector<LabInfo> selected;
  if (names.empty()) selected = labs;
  for (const auto& n : names) {
    const auto l = find_lab(labs, n);
    if (!l) {
      std::string known;
      for (const auto& k : labs) known += " " + k.id;
      usage_error("no lab named '" + n + "'; the labs are:" + known);
    }
    selected.push_back(*l);
  }

  Report report;
  report.backend = opt.backend;
  report.seed = opt.seed;
  for (const auto& lab : selected) {
    std::fprintf(stderr, "grading %s (%s) ...\n", lab.id.c_str(), opt.impl.c_str());
    LabResult r;
    try {
      r = grade_lab(lab, opt);
    } catch (const std::exception& e) {
      r.lab = lab.id;
      r.impl = opt.impl;
      r.checks.push_back(Check{"grader", "correctness", false, "", "", "", std::string("grader error: ") + e.what()});
      r.max_score = 1;
    }
    if (report.device.empty() && r.info.count("device")) report.device = r.info["device"];
    report.labs.push_back(r);
  }
  if (report.device.empty()) report.device = "device unknown";
  print_table(report, isatty(1));
  if (!json.empty()) write_json(report, json);
  if (!junit.empty()) write_junit(report, junit);
  if (const char* gh = std::getenv("GITHUB_STEP_SUMMARY"); gh && *gh) append_github_summary(report, gh);
  return report.passed() ? 0 : 1;
}
