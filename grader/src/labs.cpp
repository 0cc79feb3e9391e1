#include "labs.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "gpulab/grade/protocol.hpp"
#include "gpulab/grade/rubric.hpp"
#include "process.hpp"

namespace fs = std::filesystem;

namespace gpulab::grade {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

/// Copies a submitted file into the build tree, with a #line directive so that compiler
/// messages and the emulator's diagnostics name the submitted file, not the copy. Leaves the
/// copy alone when nothing changed (no needless rebuild).
void stage_submission(const fs::path& from, const fs::path& to) {
  const std::string text = "#line 1 \"" + fs::absolute(from).string() + "\"\n" + read_file(from.string());
  if (fs::exists(to) && read_file(to.string()) == text) return;
  fs::create_directories(to.parent_path());
  std::ofstream(to, std::ios::binary) << text;
}

/// Where a lab's source file is in a submission: the file itself (single-file labs), or inside a
/// directory laid out like the repository (DIR/labs/NN-name/file, DIR/NN-name/file, DIR/file).
std::optional<fs::path> locate(const std::string& submission, const LabInfo& lab, const std::string& source) {
  const fs::path p(submission);
  if (fs::is_regular_file(p)) return lab.sources.size() == 1 || p.filename() == source ? std::optional(p) : std::nullopt;
  for (const fs::path& c : {p / "labs" / lab.id / source, p / lab.id / source, p / source})
    if (fs::is_regular_file(c)) return c;
  return std::nullopt;
}

std::string compiler_errors(const std::string& output) {
  std::istringstream in(output);
  std::string line, errors;
  int kept = 0;
  while (std::getline(in, line) && kept < 25) {
    if (line.find("error") != std::string::npos || line.find("note:") != std::string::npos ||
        (!errors.empty() && line.rfind("  ", 0) == 0)) {
      errors += line + "\n";
      ++kept;
    }
  }
  return errors.empty() ? tail_lines(output, 25) : errors;
}

Check failed_check(const std::string& name, const std::string& kind, const std::string& message) {
  Check c;
  c.name = name;
  c.kind = kind;
  c.passed = false;
  c.message = message;
  return c;
}

/// Reads a lab process's report; checks it planned but never reported are failed with `why`.
void collect(const std::string& report_path, const std::string& suffix, const ProcessResult& proc,
             LabResult& out) {
  std::ifstream in(report_path);
  std::string line, current;
  std::vector<std::pair<std::string, std::string>> planned;
  std::set<std::string> reported;
  while (std::getline(in, line)) {
    const auto f = protocol::split(line);
    if (f.empty()) continue;
    if (f[0] == "plan" && f.size() >= 3) planned.emplace_back(f[1], f[2]);
    else if (f[0] == "begin" && f.size() >= 2) current = f[1];
    else if (f[0] == "info" && f.size() >= 3) out.info[f[1]] = f[2];
    else if (f[0] == "metric" && f.size() >= 11) out.metrics.emplace_back(f.begin() + 1, f.end());
    else if (f[0] == "check" && f.size() >= 8) {
      Check c;
      c.name = f[1] + suffix;
      c.kind = f[2];
      c.passed = f[3] == "1";
      c.value = f[4];
      c.threshold = f[5];
      c.unit = f[6];
      c.message = f[7];
      reported.insert(f[1]);
      out.checks.push_back(c);
    }
  }
  // A check planned but never reported fails, whatever the exit status: the code under test may
  // end the process itself (exit(0) in the middle of a check).
  const std::string tail = tail_lines(proc.output, 12);
  std::string why = proc.ok() ? "the lab process ended (exit status 0) before reporting it: the code under test"
                                " ended the process"
                              : "the lab process " + proc.describe();
  if (!current.empty() && !reported.count(current)) why += " while running " + current;
  if (proc.timed_out)
    why += ".\n  hint: an infinite loop, or a thread spinning on a value another block or thread never"
           " writes (there is no ordering between blocks).";
  else if (!tail.empty() && !proc.ok())
    why += ".\n" + tail;
  bool any_missing = false;
  for (const auto& [name, kind] : planned) {
    if (reported.count(name)) continue;
    any_missing = true;
    out.checks.push_back(failed_check(name + suffix, kind,
                                      name == current ? why : "not run: the lab process stopped before it"));
  }
  if (!any_missing && (proc.signal || proc.timed_out || planned.empty()))
    out.checks.push_back(failed_check("lab_process" + suffix, "correctness",
                                      planned.empty() ? why + " (before any check started)" : why));
}

/// The first symbol of the rubric's [build] forbidden_symbols that an object file of the
/// implementation references, as a message; empty when there is none.
std::string forbidden_references(const std::string& build_dir, const LabInfo& lab, const std::string& target,
                                 const Rubric& rubric) {
  std::vector<std::string> forbidden;
  std::stringstream list(rubric.text_or("build", "forbidden_symbols", ""));
  for (std::string item; std::getline(list, item, ',');) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) forbidden.push_back(item);
  }
  if (forbidden.empty()) return {};
  const fs::path dir = fs::path(build_dir) / "grader" / "labs" / lab.id / "CMakeFiles" / (target + ".dir");
  if (!fs::exists(dir)) return {};
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".o") continue;
    const ProcessResult nm = run_process({"nm", "--undefined-only", "--demangle", entry.path().string()}, {}, 60);
    if (!nm.ok()) continue;
    std::istringstream in(nm.output);
    for (std::string line; std::getline(in, line);)
      for (const auto& f : forbidden)
        if (line.find(f) != std::string::npos) {
          std::string symbol = line.substr(line.find_last_of(' ') + 1);
          return "the implementation references " + symbol + ", which this lab does not allow (" + f +
                 ")\n  hint: the vendor library is what your code is measured against, not part of it;"
                 " write the kernel yourself";
        }
  }
  return {};
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

}  // namespace

std::vector<LabInfo> read_manifest(const std::string& build_dir) {
  std::vector<LabInfo> labs;
  std::ifstream in(build_dir + "/gpulab-labs.tsv");
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string item;
    while (std::getline(ss, item, '\t')) f.push_back(item);
    if (f.size() < 6) continue;
    LabInfo l{f[0], f[1], f[2], f[3], f[4], {}};
    std::stringstream src(f[5]);
    while (std::getline(src, item, ',')) l.sources.push_back(item);
    labs.push_back(l);
  }
  return labs;
}

std::optional<LabInfo> find_lab(const std::vector<LabInfo>& labs, const std::string& name) {
  for (const auto& l : labs) {
    const std::string number = l.id.substr(0, l.id.find('-'));
    const std::string title = l.id.substr(l.id.find('-') + 1);
    if (name == l.id || name == number || name == title ||
        (name.size() == 1 && "0" + name == number))
      return l;
  }
  return std::nullopt;
}

LabResult grade_lab(const LabInfo& lab, const GradeOptions& opt) {
  LabResult r;
  r.lab = lab.id;
  r.impl = opt.impl;
  const Rubric rubric = Rubric::load(lab.rubric);
  const double timeout =
      opt.timeout_override > 0 ? opt.timeout_override : rubric.number_or("lab", "timeout_seconds", 120);

  // 1. Put the implementation in place.
  std::string dir = opt.impl == "solution" ? lab.solution_dir : lab.lab_dir;
  if (opt.impl == "submission") {
    dir = lab.submission_dir;
    for (const auto& s : lab.sources) {
      const auto found = locate(opt.submission, lab, s);
      if (!found) {
        r.checks.push_back(failed_check(
            "build", "correctness",
            "the submission " + opt.submission + " has no " + s + " for lab " + lab.id +
                "\n  hint: pass the file itself, or a directory laid out like the repository"
                " (labs/" + lab.id + "/" + s + ")"));
        score(rubric, r);
        return r;
      }
      stage_submission(*found, fs::path(lab.submission_dir) / s);
      r.source += (r.source.empty() ? "" : ", ") + fs::absolute(*found).string();
    }
  } else {
    for (const auto& s : lab.sources) r.source += (r.source.empty() ? "" : ", ") + dir + "/" + s;
  }

  // 2. Build it (a compile error fails the lab with the compiler's messages).
  const std::string target = "lab-" + lab.id + "-" + opt.impl;
  const ProcessResult build =
      run_process({"cmake", "--build", opt.build_dir, "--target", target}, {}, 900, opt.verbose);
  if (!build.ok()) {
    r.checks.push_back(failed_check("build", "correctness",
                                    "the code does not compile (" + build.describe() + "):\n" +
                                        compiler_errors(build.output)));
    score(rubric, r);
    return r;
  }

  // The rubric may forbid symbols (the vendor library a lab is measured against, dlopen): the
  // implementation's own object files must not reference them.
  if (const std::string offence = forbidden_references(opt.build_dir, lab, target, rubric); !offence.empty()) {
    r.checks.push_back(failed_check("build", "correctness", offence));
    score(rubric, r);
    return r;
  }

  // 3. Run the checks in a child process, once per warp size.
  const std::string binary = opt.build_dir + "/grader/labs/" + lab.id + "/" + target;
  bool first = true;
  for (int ws : opt.warp_sizes) {
    char tmpl[] = "/tmp/gpulab-report-XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd >= 0) close(fd);
    std::vector<std::string> argv{binary, "--rubric", lab.rubric, "--report", tmpl, "--seed", opt.seed,
                                  "--impl", opt.impl};
    if (!first) argv.push_back("--no-performance");
    std::map<std::string, std::string> env;
    if (ws > 0) env["GPULAB_WARP_SIZE"] = std::to_string(ws);
    const ProcessResult proc = run_process(argv, env, timeout, opt.verbose);
    collect(tmpl, opt.backend == "emu" ? " [warp " + std::to_string(ws) + "]" : "", proc, r);
    std::remove(tmpl);
    first = false;
    if (proc.timed_out && ws != opt.warp_sizes.back()) {
      // The other warp sizes would most likely hang too: do not spend their time limits.
      for (std::size_t i = 1; i < opt.warp_sizes.size(); ++i)
        r.checks.push_back(failed_check("lab_process [warp " + std::to_string(opt.warp_sizes[i]) + "]", "correctness",
                                        "not run: the run at warp size " + std::to_string(ws) +
                                            " did not finish within the time limit"));
      break;
    }
  }
  score(rubric, r);
  return r;
}

}  // namespace gpulab::grade
