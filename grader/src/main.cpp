// gpulab-grade: builds each lab's implementation against the pristine checks, runs the checks
// in a child process with a time limit, and reports. Usually started through ./gpulab.
//
// Exit status: 0 when every graded lab passed, 1 when not, 2 for a usage error or a report that
// could not be written (a CI job must not take a missing report for a pass).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "labs.hpp"
#include "reports.hpp"
#include "tool_cache.hpp"

using namespace gpulab::grade;

namespace {

std::string g_command = "grade";  // for messages: "gpulab grade: ...", "gpulab calibrate: ..."

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "gpulab %s: %s\n(gpulab %s --help lists the options)\n", g_command.c_str(), why.c_str(),
               g_command.c_str());
  std::exit(2);
}

/// A CLI11 check with a message that names what the option takes and the value it got
/// (CLI11 puts the option's name in front): "--seed: takes ..., not 'notanumber'".
CLI::Validator takes(const std::string& what, std::function<bool(const std::string&)> ok) {
  return CLI::Validator(
      [what, ok](std::string& value) { return ok(value) ? std::string() : "takes " + what + ", not '" + value + "'"; },
      "");
}

bool is_uint64(const std::string& s) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  std::strtoull(s.c_str(), nullptr, 10);
  return errno != ERANGE;
}

/// A time limit: positive, finite, at most a day (a larger one would overflow the deadline).
bool is_seconds(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return !s.empty() && !*end && std::isfinite(v) && v > 0 && v <= 86400;
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
  if (!out)
    std::fprintf(stderr, "gpulab calibrate: cannot write %s\n", path.c_str());
  else
    std::fprintf(stderr, "gpulab calibrate: %s: [%s] %s = %s\n", path.c_str(), section.c_str(), key.c_str(),
                 value.c_str());
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
int calibrate(const std::vector<LabInfo>& labs, GradeOptions opt, const std::vector<std::string>& names, int runs,
              bool write) {
  opt.impl = Impl::solution;
  opt.warp_sizes = is_gpu(opt.backend) ? std::vector<int>{0} : std::vector<int>{32};
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
          if (!c.passed)
            std::fprintf(stderr, "    %s: %s\n", console_text(c.name, true).c_str(),
                         console_text(c.message, false).c_str());
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
                console_text(device, true).c_str(), name(opt.backend), runs, lab.rubric.c_str());
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
      std::printf("%s = %s   ; reference measured %s\n", key.substr(dot + 1).c_str(), value,
                  console_text(s.second, true).c_str());
      if (write && !set_rubric_value(lab.rubric, section, key.substr(dot + 1), value)) status = 1;
    }
  }
  return status;
}

/// Writes the JSON and JUnit reports that were asked for; prints why one could not be written.
bool write_reports(const Report& report, const std::string& json, const std::string& junit,
                   const std::string& html = "") {
  bool ok = true;
  const auto attempt = [&](const std::string& path, const char* what,
                           void (*write)(const Report&, const std::string&)) {
    if (path.empty()) return;
    try {
      write(report, path);
    } catch (const ReportError& e) {
      std::fprintf(stderr, "gpulab grade: cannot write the %s report to %s: %s\n", what, path.c_str(), e.what());
      ok = false;
    }
  };
  attempt(json, "JSON", write_json);
  attempt(junit, "JUnit", write_junit);
  attempt(html, "HTML", write_html);
  return ok;
}

/// The report written before grading starts: "grading incomplete", the planned labs.
Report planned_report(const std::vector<LabInfo>& selected, const GradeOptions& opt) {
  Report report;
  report.backend = name(opt.backend);
  // The emulator is known before anything runs; a GPU's name comes from the runner (a hand-in
  // that does not build leaves it unknown).
  report.device = is_gpu(opt.backend) ? "device unknown" : "gpulab CPU emulator";
  report.seed = opt.seed;
  report.complete = false;
  for (const auto& lab : selected) {
    LabResult planned;
    planned.lab = lab.id;
    planned.impl = name(opt.impl);
    planned.graded = false;
    report.labs.push_back(planned);
  }
  return report;
}

/// Grades one lab; a grader error fails that lab only (the other labs are still graded).
LabResult grade_one(const LabInfo& lab, const GradeOptions& opt) {
  std::fprintf(stderr, "grading %s (%s) ...\n", lab.id.c_str(), name(opt.impl));
  std::string error;
  try {
    return grade_lab(lab, opt);
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "an unknown exception";
  }
  LabResult r;
  r.lab = lab.id;
  r.impl = name(opt.impl);
  r.checks.push_back(Check{"grader", name(CheckKind::correctness), false, "", "", "", "grader error: " + error});
  r.max_score = 1;
  return r;
}

/// Appends the report to GitHub's step summary; false (said why) when it cannot be written.
bool write_github_summary(const Report& report, const char* gh) {
  try {
    append_github_summary(report, gh);
    return true;
  } catch (const ReportError& e) {
    std::fprintf(stderr, "gpulab grade: cannot write the GitHub step summary to %s: %s\n", gh, e.what());
    return false;
  }
}

int grade(const std::vector<LabInfo>& selected, const GradeOptions& opt, const std::string& json,
          const std::string& junit, const std::string& html) {
  // Before anything runs, each report says "grading incomplete" and lists the planned labs: a
  // grader that crashes or is killed leaves that, not nothing and not an old report. It is also
  // the check that every report can be written at all, before minutes of grading.
  Report report = planned_report(selected, opt);
  if (!write_reports(report, json, junit)) return 2;
  const char* gh = std::getenv("GITHUB_STEP_SUMMARY");
  if (gh && *gh) {
    try {
      append_to_file(gh, "");  // creates it, or checks that it is a regular file
    } catch (const ReportError& e) {
      std::fprintf(stderr, "gpulab grade: cannot write the GitHub step summary to %s: %s\n", gh, e.what());
      return 2;
    }
  }
  for (std::size_t i = 0; i < selected.size(); ++i) {
    LabResult r = grade_one(selected[i], opt);
    if (report.device == "device unknown" && r.info.count("device")) report.device = r.info["device"];
    report.labs[i] = r;
    // Still incomplete, but what was graded is kept should a later lab bring the grader down.
    if (i + 1 < selected.size()) write_reports(report, json, junit);
  }
  report.complete = true;
  print_table(report, isatty(1));
  bool written = write_reports(report, json, junit, html);
  std::fflush(stdout);  // after the table
  if (written && !html.empty())
    std::fprintf(stderr, "the report to look at: %s\n", std::filesystem::absolute(html).string().c_str());
  if (gh && *gh) written = write_github_summary(report, gh) && written;
  if (!written) return 2;
  return report.passed() ? 0 : 1;
}

/// What the command line says, besides the grade options.
struct CommandLine {
  GradeOptions opt;
  std::string impl = name(Impl::student);
  std::vector<std::string> names;
  std::string seed, json, junit, html;
  int warp = 0, runs = 3;
  bool write = false;
};

// As before CLI11: an option given twice takes its last value (a verdict test's `// options:`
// line overrides the --timeout it is given first).
constexpr auto kLastWins = CLI::MultiOptionPolicy::TakeLast;

/// An option that names a file to write.
void add_file_option(CLI::App* cmd, const std::string& flag, std::string& into, const std::string& what) {
  cmd->add_option(flag, into, what)
      ->type_name("FILE")
      ->multi_option_policy(kLastWins)
      ->check(takes("a file name", [](const std::string& v) { return !v.empty(); }));
}

CLI::App* add_grade_command(CLI::App& app, CommandLine& cl) {
  CLI::App* grade_cmd = app.add_subcommand("grade", "grade labs (no LAB: all of them)");
  grade_cmd->add_option("LAB", cl.names, "01, 1, 01-coalescing or coalescing")->type_name("");
  grade_cmd->add_option("--impl", cl.impl, "grade the file you edit in labs/ (student, the default) or the reference")
      ->type_name("student|solution")
      ->multi_option_policy(kLastWins)
      ->check(takes("student or solution", [](const std::string& v) {
        const std::optional<Impl> impl = parse_impl(v);
        return impl && *impl != Impl::submission;  // that one is --submission's
      }));
  grade_cmd
      ->add_option("--submission", cl.opt.submission,
                   "grade PATH instead: a lab's file, or a directory laid out like the repository "
                   "(labs/NN-name/...); the working tree is not touched")
      ->type_name("PATH")
      ->multi_option_policy(kLastWins);
  grade_cmd->add_option("--warp-size", cl.warp, "emulator: run the checks at this warp size only (default: both)")
      ->type_name("32|64")
      ->multi_option_policy(kLastWins)
      ->check(takes("32 or 64", [](const std::string& v) { return v == "32" || v == "64"; }));
  grade_cmd->add_option("--seed", cl.seed, "reuse the random inputs of an earlier run")
      ->type_name("N")
      ->multi_option_policy(kLastWins)
      ->check(takes("an unsigned 64-bit integer", is_uint64));
  grade_cmd->add_flag("--no-performance", cl.opt.skip_performance,
                      "plan and run no performance check (a GPU grade's emulator run uses it)");
  grade_cmd->add_option("--emu-build", cl.opt.emu_build,
                        "GPU back-ends: the emulator's build tree for the portability check (default: build/emu, "
                        "else build/emu-gcc)")
      ->type_name("DIR")
      ->multi_option_policy(kLastWins);
  add_file_option(grade_cmd, "--json", cl.json, "write a machine-readable report (schema: docs/report-format.md)");
  add_file_option(grade_cmd, "--junit", cl.junit, "write JUnit XML (one test case per check) for CI");
  add_file_option(grade_cmd, "--html", cl.html,
                  "write a page to look at: the checks, and the source with each line's memory metrics "
                  "(./gpulab grade writes build/<back-end>/gpulab-report.html unless told otherwise)");
  return grade_cmd;
}

CLI::App* add_calibrate_command(CLI::App& app, CommandLine& cl) {
  CLI::App* calibrate_cmd =
      app.add_subcommand("calibrate",
                         "grade the reference solutions N times on this device and print (--write: store) the rubric "
                         "thresholds they suggest");
  calibrate_cmd->add_option("LAB", cl.names, "01, 1, 01-coalescing or coalescing")->type_name("");
  calibrate_cmd->add_option("--runs", cl.runs, "how many times (default 3)")
      ->type_name("N")
      ->multi_option_policy(kLastWins)
      ->check(takes("a whole number from 1 to 100", [](const std::string& v) {
        return !v.empty() && v.size() <= 3 && v.find_first_not_of("0123456789") == std::string::npos &&
               std::stoi(v) >= 1 && std::stoi(v) <= 100;
      }));
  calibrate_cmd->add_flag("--write", cl.write, "store the suggested thresholds in the rubric files");
  return calibrate_cmd;
}

/// The options grade and calibrate share.
void add_common_options(CLI::App* cmd, CommandLine& cl) {
  cmd->add_option("--timeout", cl.opt.timeout_override, "time limit of each lab process (default: the lab's rubric)")
      ->type_name("SECONDS")
      ->multi_option_policy(kLastWins)
      ->check(takes("a positive number of seconds, at most 86400", is_seconds));
  cmd->add_flag("--verbose", cl.opt.verbose, "show the build and the lab processes' output");
}

/// The grade options the parsed command line implies: the implementation, the warp sizes, the seed.
void settle_grade_options(CommandLine& cl) {
  GradeOptions& opt = cl.opt;
  opt.impl = parse_impl(cl.impl).value_or(Impl::student);
  if (!opt.submission.empty()) {
    if (opt.impl == Impl::solution) usage_error("--submission and --impl solution exclude each other");
    opt.impl = Impl::submission;
    if (access(opt.submission.c_str(), R_OK) != 0) usage_error("cannot read the submission " + opt.submission);
  }
  if (!cl.json.empty() && !cl.junit.empty() &&
      std::filesystem::absolute(cl.json).lexically_normal() == std::filesystem::absolute(cl.junit).lexically_normal())
    usage_error("--json and --junit name the same file");
  if (!is_gpu(opt.backend)) {
    opt.warp_sizes = cl.warp ? std::vector<int>{cl.warp} : std::vector<int>{32, 64};
  } else {
    if (cl.warp) std::fprintf(stderr, "gpulab grade: --warp-size applies to the emulator; the GPU's warp size is used\n");
    opt.warp_sizes = {0};
  }
  // Printed in the report; --seed N reproduces it (normalised: "007" is 7).
  opt.seed = std::to_string(cl.seed.empty() ? std::random_device{}() % 1000000000u
                                            : std::strtoull(cl.seed.c_str(), nullptr, 10));
}

/// `report`: the HTML page of a JSON report. Exit 0 with the page written, 1 when not.
int page_of_report(const std::string& json_path, std::string html_path) {
  if (html_path.empty())
    html_path = std::filesystem::path(json_path).replace_extension(".html").string();
  try {
    std::ifstream in(json_path);
    std::stringstream text;
    text << in.rdbuf();
    write_html(report_from_json(text.str()), html_path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpulab report: %s: %s (expected a JSON report of gpulab grade --json)\n", json_path.c_str(),
                 e.what());
    return 1;
  }
  std::fprintf(stderr, "the report to look at: %s\n", std::filesystem::absolute(html_path).string().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The lab processes are GoogleTest programs whose tests the grader selects itself: a caller's
  // sharding or filter (e.g. a verdict suite run as shards) must not reach them and drop checks.
  for (const char* name : {"GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX", "GTEST_SHARD_STATUS_FILE", "GTEST_FILTER",
                           "GTEST_OUTPUT", "GTEST_REPEAT", "GTEST_SHUFFLE", "GTEST_RANDOM_SEED", "GTEST_FAIL_FAST"})
    ::unsetenv(name);
  CommandLine cl;
  const std::optional<Backend> backend = parse_backend(GPULAB_DEFAULT_BACKEND);
  if (!backend) usage_error(std::string("this grader was built for an unknown back-end: ") + GPULAB_DEFAULT_BACKEND);
  cl.opt.backend = *backend;
  cl.opt.build_dir = GPULAB_BUILD_DIR;

  CLI::App app(
      "Grades the labs: builds each implementation against the pristine checks and runs them "
      "in a child process with a time limit.",
      "gpulab");
  app.require_subcommand(1);
  CLI::App* grade_cmd = add_grade_command(app, cl);
  CLI::App* calibrate_cmd = add_calibrate_command(app, cl);
  for (CLI::App* cmd : {grade_cmd, calibrate_cmd}) add_common_options(cmd, cl);
  CLI::App* list_cmd = app.add_subcommand("list", "the labs this build knows");
  std::string report_json;
  CLI::App* report_cmd = app.add_subcommand(
      "report", "the page to look at (HTML) of a JSON report written elsewhere: a CI's, or a GPU machine's");
  report_cmd->add_option("REPORT", report_json, "a JSON report of gpulab grade (--json)")->required()->check(CLI::ExistingFile);
  report_cmd->add_option("--html", cl.html, "where the page goes (default: REPORT with .html for .json)");

  if (argc > 1 && (std::string(argv[1]) == "list" || std::string(argv[1]) == "calibrate")) g_command = argv[1];
  if (argc < 2) {
    std::fprintf(stderr, "%s", app.help().c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    usage_error(e.what());
  }

  if (report_cmd->parsed()) return page_of_report(report_json, cl.html);
  // What tools say about the libraries and compilers of this build, kept between grades.
  tool_cache::set_directory(cl.opt.build_dir + "/.gpulab-tool-cache");
  const auto labs = read_manifest(cl.opt.build_dir);
  if (labs.empty())
    usage_error("no labs recorded in " + cl.opt.build_dir + "/gpulab-labs.tsv: configure the build first");
  if (list_cmd->parsed()) {
    for (const auto& l : labs) std::printf("%s\t%s\n", l.id.c_str(), l.lab_dir.c_str());
    return 0;
  }
  if (calibrate_cmd->parsed()) return calibrate(labs, cl.opt, cl.names, cl.runs, cl.write);
  settle_grade_options(cl);
  return grade(select_labs(labs, cl.names), cl.opt, cl.json, cl.junit, cl.html);
}
