// gpulab-grade: builds each lab's implementation against the pristine checks, runs the checks
// in a child process with a time limit, and reports. Usually started through ./gpulab.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <random>
#include <string>
#include <vector>

#include "labs.hpp"
#include "reports.hpp"

using namespace gpulab::grade;

namespace {

const char* kUsage =
    "usage: gpulab grade [LAB...] [options]      grade labs (no LAB: all of them)\n"
    "       gpulab calibrate [LAB...] [--runs N] [--write]\n"
    "                                            grade the reference solutions N times (default 3)\n"
    "                                            on this device and print (--write: store) the\n"
    "                                            rubric thresholds they suggest\n"
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

/// Sets `key = value` in [section] of a rubric file, keeping everything else (comments too).
bool set_rubric_value(const std::string& path, const std::string& section, const std::string& key,
                      const std::string& value) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line, current;
  bool done = false;
  int section_end = -1;
  while (std::getline(in, line)) lines.push_back(line);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    const auto first = l.find_first_not_of(" \t");
    if (first != std::string::npos && l[first] == '[') {
      current = l.substr(first + 1, l.find(']') - first - 1);
      continue;
    }
    if (current != section) continue;
    section_end = static_cast<int>(i);
    const auto eq = l.find('=');
    if (eq == std::string::npos || l.find_first_of(";#") < eq) continue;
    std::string k = l.substr(0, eq);
    k.erase(0, k.find_first_not_of(" \t"));
    k.erase(k.find_last_not_of(" \t") + 1);
    if (k == key) {
      lines[i] = key + " = " + value;
      done = true;
    }
  }
  if (!done) {
    if (section_end < 0) {
      lines.push_back("[" + section + "]");
      section_end = static_cast<int>(lines.size()) - 1;
    }
    lines.insert(lines.begin() + section_end + 1, key + " = " + value);
  }
  std::ofstream out(path);
  for (const auto& l : lines) out << l << "\n";
  if (!out) std::fprintf(stderr, "gpulab calibrate: cannot write %s\n", path.c_str());
  else std::fprintf(stderr, "gpulab calibrate: %s: [%s] %s = %s\n", path.c_str(), section.c_str(), key.c_str(), value.c_str());
  return static_cast<bool>(out);
}

std::vector<LabInfo> select_labs(const std::vector<LabInfo>& labs, const std::vector<std::string>& names) {
  if (names.empty()) return labs;
  std::vector<LabInfo> selected;
  for (const auto& n : names) {
    const auto l = find_lab(labs, n);
    if (!l) {
      std::string known;
      for (const auto& k : labs) known += " " + k.id;
      usage_error("no lab named '" + n + "'; the labs are:" + known);
    }
    selected.push_back(*l);
  }
  return selected;
}

/// Grades the reference solutions `runs` times and prints, per rubric key, the threshold the
/// worst run suggests (the checks report `suggest.<section>.<key>` = suggestion and measurement).
int calibrate(const std::vector<LabInfo>& labs, GradeOptions opt, const std::vector<std::string>& args) {
  int runs = 3;
  bool write = false;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--runs" && i + 1 < args.size()) runs = std::max(1, std::atoi(args[++i].c_str()));
    else if (args[i] == "--write") write = true;
    else if (!args[i].empty() && args[i][0] == '-') usage_error("unknown option " + args[i]);
    else names.push_back(args[i]);
  }
  opt.impl = "solution";
  opt.warp_sizes = opt.backend == "emu" ? std::vector<int>{32} : std::vector<int>{0};
  int status = 0;
  for (const auto& lab : select_labs(labs, names)) {
    std::map<std::string, std::pair<double, std::string>> suggestion;  // key -> (worst, all measured)
    std::string device;
    for (int run = 0; run < runs; ++run) {
      opt.seed = std::to_string(std::random_device{}() % 1000000000u);
      std::fprintf(stderr, "calibrating %s: run %d of %d ...\n", lab.id.c_str(), run + 1, runs);
      LabResult r = grade_lab(lab, opt);
      if (!r.passed) {
        std::fprintf(stderr, "  the reference solution did not pass every check (thresholds may be off):\n");
        for (const auto& c : r.checks)
          if (!c.passed) std::fprintf(stderr, "    %s: %s\n", c.name.c_str(), c.message.c_str());
      }
      device = r.info.count("device") ? r.info["device"] : device;
      for (const auto& [key, value] : r.info) {
        if (key.rfind("suggest.", 0) != 0) continue;
        const auto tab = value.find('\t');
        const double v = std::atof(value.substr(0, tab).c_str());
        auto& s = suggestion[key.substr(8)];
        if (s.second.empty() || v < s.first) s.first = v;
        s.second += (s.second.empty() ? "" : ", ") + (tab == std::string::npos ? value : value.substr(tab + 1));
      }
    }
    std::printf("\n# %s on %s (%s), reference solution, %d run(s): paste into %s\n", lab.id.c_str(),
                device.c_str(), opt.backend.c_str(), runs, lab.rubric.c_str());
    if (suggestion.empty()) {
      std::printf("# (no check of this back-end suggests a threshold)\n");
      continue;
    }
    std::string section;
    for (const auto& [key, s] : suggestion) {
      const auto dot = key.rfind('.');
      if (key.substr(0, dot) != section) std::printf("[%s]\n", (section = key.substr(0, dot)).c_str());
      char value[32];
      std::snprintf(value, sizeof value, "%.3g", s.first);
      std::printf("%s = %s   ; reference measured %s\n", key.substr(dot + 1).c_str(), value, s.second.c_str());
      if (write && !set_rubric_value(lab.rubric, section, key.substr(dot + 1), value)) status = 1;
    }
  }
  return status;
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
  if (command == "calibrate") return calibrate(labs, opt, std::vector<std::string>(args.begin() + 1, args.end()));
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

  const std::vector<LabInfo> selected = select_labs(labs, names);

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
