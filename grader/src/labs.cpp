#include "labs.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "gpulab/grade/defences.hpp"
#include "gpulab/grade/protocol.hpp"
#include "gpulab/grade/rubric.hpp"
#include "gpu_sanitizer.hpp"
#include "handin.hpp"
#include "process.hpp"
#include "record_channel.hpp"
#include "sandbox.hpp"
#include "vetting.hpp"

namespace fs = std::filesystem;

namespace gpulab::grade {
namespace {

std::string suffix_of(const GradeOptions& opt, int warp) {
  return opt.backend == "emu" ? " [warp " + std::to_string(warp) + "]" : "";
}

/// On a GPU back-end, the lab processes of graders sharing a build tree (a class graded with
/// `./gpulab grade-class --jobs N`) take turns at the GPU: a timed section never shares the device
/// with another hand-in's kernels, while compiling and the emulator's portability run go on in
/// parallel. The emulator needs no turn. GPULAB_GPU_LOCK names another lock file (one per GPU
/// for graders in several build trees).
class GpuTurn {
 public:
  explicit GpuTurn(const GradeOptions& opt) {
    if (opt.backend == "emu") return;
    const char* named = std::getenv("GPULAB_GPU_LOCK");
    const std::string path = named && *named ? named : opt.build_dir + "/.gpulab-gpu.lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~GpuTurn() {
    if (fd_ >= 0) ::close(fd_);
  }
  GpuTurn(const GpuTurn&) = delete;
  GpuTurn& operator=(const GpuTurn&) = delete;

 private:
  int fd_ = -1;
};

/// Where a lab's source file is in a submission: the file itself (single-file labs), or inside a
/// directory laid out like the repository (DIR/labs/NN-name/file, DIR/NN-name/file, DIR/file).
std::optional<fs::path> locate(const std::string& submission, const LabInfo& lab, const std::string& source) {
  const fs::path p(submission);
  if (fs::is_regular_file(p)) return lab.sources.size() == 1 || p.filename() == source ? std::optional(p) : std::nullopt;
  for (const fs::path& c : {p / "labs" / lab.id / source, p / lab.id / source, p / source})
    if (fs::is_regular_file(c)) return c;
  return std::nullopt;
}

Check failed_check(const std::string& name, const std::string& kind, const std::string& message) {
  Check c;
  c.name = name;
  c.kind = kind;
  c.passed = false;
  c.message = message;
  return c;
}

/// Reads the judge's report (gpulab/grade/protocol.hpp) into `out`, with `suffix` on each name.
/// `keep_metrics`: take its metric rows (all of them); only the first run's are reported, since
/// the later warp sizes run no performance check.
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

/// The checks of a lab, from its judge (trusted: the reference solution's executable).
std::vector<std::pair<std::string, std::string>> planned_checks(const std::string& judge, const std::string& rubric) {
  const ProcessResult r = run_process({judge, "--rubric", rubric, "--gtest_list_tests"}, {}, 120);
  if (!r.ok()) throw std::runtime_error("cannot list the checks of " + judge + ": " + tail_lines(r.output, 8));
  std::vector<std::pair<std::string, std::string>> plan;
  std::istringstream in(r.output);
  std::string line, suite;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] != ' ') {
      suite = line.substr(0, line.find('.'));
    } else if (!suite.empty()) {
      std::string name = line.substr(line.find_first_not_of(' '));
      name = name.substr(0, name.find_first_of(" #"));
      plan.emplace_back(suite + "." + name, suite);
    }
  }
  if (plan.empty()) throw std::runtime_error(judge + " lists no checks");
  return plan;
}

/// Holds the verdicts to the plan: every planned check exactly once. A planned check without a
/// verdict fails; a verdict for a check that was not planned, or a second one, is a failure of
/// its own (the judge is trusted, so this only guards against grader bugs).
void complete_plan(const std::vector<std::pair<std::string, std::string>>& plan, const std::vector<std::string>& suffixes,
                   LabResult& r) {
  std::map<std::string, std::string> expected;  // name + suffix -> kind
  for (std::size_t w = 0; w < suffixes.size(); ++w)
    for (const auto& [name, kind] : plan)
      if (w == 0 || kind != "performance") expected[name + suffixes[w]] = kind;
  std::map<std::string, int> seen;
  std::vector<Check> kept;
  for (auto& c : r.checks) {
    const auto it = expected.find(c.name);
    if (it == expected.end() && defence_enabled("plan")) {
      kept.push_back(failed_check(c.name, c.kind, "a verdict for a check that was not planned"));
      kept.back().kind = "correctness";
      continue;
    }
    if (seen[c.name]++ && defence_enabled("plan")) continue;  // the first verdict counts
    if (it != expected.end()) c.kind = it->second;            // points follow the plan's kind
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

/// The device nodes a GPU lab process needs.
std::vector<std::string> gpu_devices() {
  return {"/dev/nvidia*", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/kfd", "/dev/dri"};
}

nlohmann::json emulator_grade(const LabInfo& lab, const GradeOptions& opt, const std::string& work);

/// The emulator's grade of this hand-in (see emulator_grade), started early by grade_lab so that
/// it runs while the GPU work goes on; made here if it was not started.
nlohmann::json emulator_report(std::shared_future<nlohmann::json>& started, const LabInfo& lab,
                               const GradeOptions& opt, const std::string& work) {
  return started.valid() ? started.get() : emulator_grade(lab, opt, work);
}

/// Runs the sanitizer checks of a GPU grade under the GPU's own sanitizer, a process per tool,
/// and writes what it found (or why nothing was measured) for the judge (--gpu-findings).
void run_gpu_sanitizer(const GradeOptions& opt, const LabInfo& lab, const std::string& runner, const std::string& work,
                       double timeout, const std::string& out_path, std::shared_future<nlohmann::json>& emu) {
  nlohmann::json doc = nlohmann::json::object();
  const std::string tool = opt.backend == "cuda" ? find_compute_sanitizer() : "";
  if (opt.backend != "cuda") {
    // No GPU sanitizer: the emulator's, from its grade of this hand-in (where it traces memory).
    const nlohmann::json report = emulator_report(emu, lab, opt, work);
    std::string why = report.contains("error") ? report["error"].get<std::string>() : "";
    nlohmann::json findings = nlohmann::json::array();
    bool measured = false;
    if (why.empty())
      for (const auto& k : report["labs"][0].value("checks", nlohmann::json::array())) {
        if (k.value("kind", "") != "sanitizer") continue;
        const std::string message = k.value("message", "");
        if (message.rfind("not measured", 0) == 0) {
          why = "on the emulator: " + message;
          continue;
        }
        measured = true;
        std::istringstream lines(message);
        for (std::string line; std::getline(lines, line);)
          if (!line.empty() && line[0] != ' ' && line.find(": ") != std::string::npos)
            findings.push_back({{"kind", line.substr(0, line.find(": "))},
                                {"message", "on the emulator at warp size 32: " + line.substr(line.find(": ") + 2)},
                                {"count", 1}});
        if (!k.value("passed", false) && findings.empty())
          findings.push_back({{"kind", "sanitizer"}, {"message", "on the emulator: " + message}, {"count", 1}});
      }
    if (measured) doc["findings"] = findings;
    else doc["not_measured"] = "no GPU sanitizer runs on " + opt.backend + (why.empty() ? "" : "; " + why);
  } else if (tool.empty()) {
    doc["not_measured"] = "compute-sanitizer was not found (it comes with the CUDA Toolkit: put its bin/ on PATH)";
  } else {
    // One process per tool, all at once: nothing here is timed, each tool watches its own
    // process, and the four together take the time of the slowest instead of the sum.
    const std::vector<std::string>& tools = compute_sanitizer_tools();
    std::vector<ProcessResult> runs(tools.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < tools.size(); ++i)
      threads.emplace_back([&, i] {
        // Each its own writable directory (HOME, caches) so that the four never share a file.
        const std::string dir = work + "/run-" + tools[i];
        std::error_code ec;
        fs::create_directories(dir, ec);
        SandboxSpec spec = base_sandbox(opt.build_dir, dir, 4 * timeout);
        spec.devices = gpu_devices();
        spec.address_space_bytes = 0;
        spec.output_limit = 4u << 20;
        runs[i] = confined({tool, "--tool", tools[i], "--print-limit", "100", "--show-backtrace", "no", runner, "--rubric",
                            lab.rubric, "--seed", opt.seed, "--impl", opt.impl, "--no-performance",
                            "--gtest_filter=sanitizer.*"},
                           spec, opt.verbose);
      });
    for (auto& t : threads) t.join();
    nlohmann::json findings = nlohmann::json::array();
    std::string trouble;
    for (std::size_t i = 0; i < tools.size(); ++i) {
      const std::string& t = tools[i];
      const ProcessResult& p = runs[i];
      std::ofstream(work + "/sanitizer-" + t + ".log") << p.output;
      for (auto& f : parse_compute_sanitizer(t, p.output)) findings.push_back(f);
      if (p.timed_out)
        trouble += "compute-sanitizer --tool " + t + " did not finish within " + std::to_string(int(4 * timeout)) + " s; ";
      else if (p.output.find("COMPUTE-SANITIZER") == std::string::npos)
        trouble += "compute-sanitizer --tool " + t + " did not run (" + p.describe() + "): " + tail_lines(p.output, 3) + "; ";
    }
    doc["findings"] = findings;
    if (findings.empty() && !trouble.empty()) doc["not_measured"] = trouble.substr(0, trouble.size() - 2);
  }
  std::ofstream(out_path) << doc.dump(1);
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
    if (p.kind != "performance" || !p.passed) continue;
    std::vector<std::string> wrong;
    for (const auto& c : r.checks) {
      if (c.passed || suffix(c.name) != suffix(p.name)) continue;
      const bool found = c.kind == "sanitizer" && !c.value.empty() && std::atof(c.value.c_str()) > 0;
      if (c.kind == "correctness" || found) wrong.push_back(c.name);
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

/// The emulator's grade of the same hand-in at the other warp size (the warp size the GPU does
/// not have), correctness and sanitizer only: its JSON report, or why there is none ("error").
/// Made once per grade (cached in the work directory): the portability check and, on rocm, the
/// sanitizer check read it.
nlohmann::json emulator_grade(const LabInfo& lab, const GradeOptions& opt, const std::string& work) {
  const int warp = opt.backend == "rocm" ? 32 : 64;
  const std::string json_path = work + "/portability.json";
  {
    std::ifstream cached(json_path);
    const nlohmann::json report = nlohmann::json::parse(cached, nullptr, false);
    if (report.is_object()) return report;
  }
  std::string tree = opt.emu_build;
  if (tree.empty())
    for (const char* name : {"emu", "emu-gcc"}) {
      const fs::path t = fs::path(opt.build_dir).parent_path() / name;
      if (fs::exists(t / "grader/gpulab-grade")) {
        tree = t.string();
        break;
      }
    }
  nlohmann::json failed = nlohmann::json::object();
  if (tree.empty() || !fs::exists(fs::path(tree) / "grader/gpulab-grade")) {
    failed["error"] = "the emulator is not built here (build/emu with clang, or build/emu-gcc with g++); "
                      "./gpulab grade builds it on a GPU machine (it needs Boost's headers)";
  } else {
    // At a lower priority: on a GPU grade it runs alongside the timed runs, whose launches must
    // not wait for a CPU.
    std::vector<std::string> argv{"nice", "-n", "10", (fs::path(tree) / "grader/gpulab-grade").string(), "grade", lab.id, "--warp-size",
                                  std::to_string(warp), "--seed", opt.seed, "--no-performance", "--json", json_path};
    if (opt.impl == "solution") argv.insert(argv.end(), {"--impl", "solution"});
    if (opt.impl == "submission") argv.insert(argv.end(), {"--submission", opt.submission});
    if (opt.timeout_override > 0) argv.insert(argv.end(), {"--timeout", std::to_string(opt.timeout_override)});
    const ProcessResult p = run_process(argv, {}, 3600, opt.verbose);
    std::ifstream in(json_path);
    const nlohmann::json report = nlohmann::json::parse(in, nullptr, false);
    if (report.is_object() && !report.value("labs", nlohmann::json::array()).empty()) return report;
    failed["error"] = "the emulator's grade did not finish (" + p.describe() + "): " + tail_lines(p.output, 6);
  }
  std::ofstream(json_path) << failed.dump();
  return failed;
}

/// A GPU grade takes the emulator's verdict on where the work happened: where the emulator's
/// grade of the same hand-in found results computed or copied by host code (device memory read
/// back or dereferenced by the host, outputs written by host copies, no kernel run: the kit's
/// "host_work" rules), every correctness check of the GPU grade fails with that finding, since a
/// GPU's run cannot see what host code did. Without an emulator grade nothing changes (the
/// portability check says why it is missing).
void host_work_verdict(const nlohmann::json& emulator, LabResult& r) {
  if (!defence_enabled("host-work-on-gpu") || emulator.contains("error")) return;
  const auto labs = emulator.value("labs", nlohmann::json::array());
  if (labs.empty() || !labs[0].is_object()) return;
  const auto info = labs[0].value("info", nlohmann::json::object());
  std::string finding;
  for (const auto& [key, value] : info.items())
    if (key.rfind("host_work", 0) == 0 && value.is_string()) finding = value.get<std::string>();
  if (finding.empty()) return;
  for (auto& c : r.checks) {
    if (c.kind != "correctness") continue;
    c.passed = false;
    c.message = "on the emulator (the same hand-in): " + finding +
                "\n  hint: a GPU's run cannot see host code computing the results; ./gpulab grade --backend emu shows"
                " it with file:line" + (c.message.empty() ? "" : "\n" + c.message);
  }
}

/// A GPU grade's portability check: the same hand-in's correctness (and, where the emulator
/// traces memory, sanitizer) checks on the emulator at the other warp size -- code written for 32
/// lanes, and undefined behaviour a GPU happens to survive (a barrier in divergent code).
Check portability_check(const LabInfo& lab, const GradeOptions& opt, const std::string& work,
                        std::shared_future<nlohmann::json>& emu) {
  const int warp = opt.backend == "rocm" ? 32 : 64;
  Check c;
  c.name = "portability.emulator_warp_" + std::to_string(warp);
  c.kind = "portability";
  c.unit = "checks failing";
  c.threshold = "0";
  const nlohmann::json report = emulator_report(emu, lab, opt, work);
  if (report.contains("error")) {
    c.message = "not measured: " + report["error"].get<std::string>();
    return c;
  }
  int failing = 0, counted = 0;
  std::string detail;
  for (const auto& k : report["labs"][0].value("checks", nlohmann::json::array())) {
    const std::string kind = k.value("kind", ""), message = k.value("message", "");
    // The emulator's sanitizer counts where it is measured (a clang-built emulator).
    if (kind != "correctness" && !(kind == "sanitizer" && message.rfind("not measured", 0) != 0)) continue;
    ++counted;
    if (k.value("passed", false)) continue;
    if (++failing <= 4) {
      std::istringstream lines(message);
      std::string line, first;
      for (int i = 0; i < 3 && std::getline(lines, line); ++i) first += "\n    " + line;
      detail += "\n  " + k.value("name", std::string("?")) + ":" + first;
    }
  }
  c.value = std::to_string(failing);
  c.passed = failing == 0 && counted > 0;
  if (counted == 0)
    c.message = "not measured: the emulator's grade has no correctness check";
  else if (failing > 0)
    c.message = std::to_string(failing) + " of " + std::to_string(counted) + " checks fail on the emulator at warp size " +
                std::to_string(warp) + ":" + detail + (failing > 4 ? "\n  ..." : "") + "\n  hint: right on this GPU but not at " +
                std::to_string(warp) +
                " lanes, or relying on behaviour a GPU does not promise (a __syncthreads in divergent code); ./gpulab grade " +
                lab.id + " --backend emu --warp-size " + std::to_string(warp) + " shows it with file:line";
  return c;
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
    LabInfo l{f[0], f[1], f[2], f[3], f[4], {}, {}};
    std::stringstream src(f[5]);
    while (std::getline(src, item, ',')) l.sources.push_back(item);
    std::stringstream fn(f.size() > 6 ? f[6] : "");
    while (std::getline(fn, item, ',')) l.functions.push_back(item);
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
  auto since = std::chrono::steady_clock::now();
  // Adds the time since the last lap to a phase of r.seconds.
  auto lap = [&](const std::string& phase) {
    const auto now = std::chrono::steady_clock::now();
    r.seconds[phase] += std::chrono::duration<double>(now - since).count();
    since = now;
  };
  r.lab = lab.id;
  r.impl = opt.impl;
  const Rubric rubric = Rubric::load(lab.rubric);
  const double timeout =
      opt.timeout_override > 0 ? opt.timeout_override : rubric.number_or("lab", "timeout_seconds", 120);
  const double build_timeout =
      opt.timeout_override > 0 ? opt.timeout_override : rubric.number_or("lab", "build_timeout_seconds", 300);

  // 0. The judge (the reference solution's executable: trusted code, built from the pristine
  // tree) and everything a hand-in links with.
  const std::string judge_target = "lab-" + lab.id + "-solution";
  ProcessResult trusted;
  {
    // Graders sharing a build tree (a class graded in parallel) take turns at building it.
    const int lock = ::open((opt.build_dir + "/.gpulab-build.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock >= 0) ::flock(lock, LOCK_EX);
    trusted = run_process({"cmake", "--build", opt.build_dir, "--target", judge_target}, {}, 1800, opt.verbose);
    if (lock >= 0) ::close(lock);
  }
  if (!trusted.ok()) throw std::runtime_error("building " + judge_target + " failed:\n" + tail_lines(trusted.output, 30));
  const std::string judge = opt.build_dir + "/grader/labs/" + lab.id + "/" + judge_target;

  // The plan: the judge's checks, known before any code under test runs. Performance checks run
  // at the first warp size only. max_score never depends on what ran.
  std::vector<std::pair<std::string, std::string>> plan = planned_checks(judge, lab.rubric);
  if (opt.skip_performance)
    plan.erase(std::remove_if(plan.begin(), plan.end(), [](const auto& c) { return c.second == "performance"; }),
               plan.end());
  const bool gpu_sanitizer = opt.backend != "emu" &&
                             std::any_of(plan.begin(), plan.end(), [](const auto& c) { return c.second == "sanitizer"; });
  std::vector<std::string> suffixes;
  for (int ws : opt.warp_sizes) suffixes.push_back(suffix_of(opt, ws));
  auto fail_plan = [&](const std::string& message) {
    for (std::size_t w = 0; w < opt.warp_sizes.size(); ++w)
      for (const auto& [name, kind] : plan)
        if (w == 0 || kind != "performance")
          r.checks.push_back(failed_check(name + suffix_of(opt, opt.warp_sizes[w]), kind,
                                          w == 0 && &name == &plan.front().first ? message : "not run (the first check says why)"));
    score(rubric, r);
    return r;
  };

  // 1. The code under test: the reference's own executable, or a hand-in built in the sandbox.
  std::string runner = judge;
  const std::string work = opt.build_dir + "/handins/" + lab.id + "-" + opt.impl + "-" + std::to_string(::getpid());
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      if (!std::getenv("GPULAB_KEEP_HANDINS")) fs::remove_all(dir, ec);
    }
  } cleanup{work};
  // A GPU grade's emulator run (the portability check; on rocm the sanitizer too) needs no GPU:
  // it starts now and goes on while the hand-in is built and run on the GPU. Declared after
  // `cleanup`, so that an early return waits for it before the work directory goes.
  // (The times first: the run writes emu_done, so it must outlive the future that waits for it.)
  std::chrono::steady_clock::time_point emu_started, emu_done;
  std::shared_future<nlohmann::json> emu;
  // On a GPU the emulator's grade of the same hand-in also says where the work happened (the GPU
  // cannot see host code computing the results: host_work_verdict), besides portability.
  const bool needs_emulator = opt.backend != "emu";
  if (needs_emulator) {
    fs::create_directories(work);
    emu_started = std::chrono::steady_clock::now();
    emu = std::async(std::launch::async, [&lab, &opt, work, &emu_done] {
            nlohmann::json report = emulator_grade(lab, opt, work);
            emu_done = std::chrono::steady_clock::now();
            return report;
          }).share();
  }
  lap("plan");
  if (opt.impl != "solution") {
    std::vector<std::string> files;
    for (const auto& s : lab.sources) {
      std::string file, resolved;
      if (opt.impl == "submission") {
        const auto found = locate(opt.submission, lab, s);
        if (!found)
          return fail_plan("the submission " + opt.submission + " has no " + s + " for lab " + lab.id +
                           "\n  hint: pass the file itself, or a directory laid out like the repository"
                           " (labs/" + lab.id + "/" + s + ")");
        file = found->string();
      } else {
        file = lab.lab_dir + "/" + s;
      }
      const std::string root = opt.impl == "submission" ? opt.submission : file;
      r.source += (r.source.empty() ? "" : ", ") + fs::absolute(file).string();
      if (!defence_enabled("handin-paths")) resolved = file;
      else if (const std::string bad = vetting::resolve_handin_file(root, file, resolved); !bad.empty())
        return fail_plan(bad);
      files.push_back(resolved);
    }
    const HandinBuild built = build_handin(opt.build_dir, lab, files, work, build_timeout, opt.verbose);
    r.isolation = built.isolation;
    if (!built.ok) return fail_plan(built.message);
    runner = built.executable;
    lap("build");
  } else {
    for (const auto& s : lab.sources) r.source += (r.source.empty() ? "" : ", ") + lab.solution_dir + "/" + s;
    fs::create_directories(work);
  }
  // The emulator's performance grade from a model of a GPU that needs occupancy (a rubric with
  // performance.emu model_arch, lab 06's): the kernels' registers and static shared memory, from
  // nvcc in the sandbox (compile only), for the judge. The files are those the build compiled (a
  // hand-in's staged copies) or the reference's.
  std::string kernel_resources_path;
  if (opt.backend == "emu" && !opt.skip_performance && rubric.text("performance.emu", "model_arch")) {
    std::vector<std::string> compiled;
    for (const auto& s : lab.sources)
      compiled.push_back(opt.impl == "solution" ? lab.solution_dir + "/" + s : work + "/src/" + s);
    kernel_resources_path = work + "/kernel-resources.json";
    std::ofstream(kernel_resources_path)
        << kernel_resources(opt.build_dir, lab, compiled, work,
                            rubric.text("performance.emu", "model_arch").value_or("sm_90"), build_timeout, opt.verbose);
    lap("build");
  }

  // 2. Run it in the sandbox, once per warp size, recording into a file only the grader can
  // see; 3. judge each record with the trusted judge.
  bool first = true;
  for (int ws : opt.warp_sizes) {
    const std::string suffix = suffix_of(opt, ws);
    const std::string record_path = work + "/record-" + std::to_string(ws) + ".bin";
    const std::string report_path = work + "/verdicts-" + std::to_string(ws) + ".tsv";
    RecordChannel record(record_path);
    RecordKey key;
    const int channel = record.write_end();
    std::vector<std::string> argv{runner,    "--rubric", lab.rubric,  "--seed", opt.seed, "--impl", opt.impl,
                                  "--channel", std::to_string(channel), "--record-key-fd", std::to_string(key.runner_fd())};
    if (!first || opt.skip_performance) argv.push_back("--no-performance");
    SandboxSpec spec = base_sandbox(opt.build_dir, work + "/run", timeout);
    fs::create_directories(work + "/run");
    spec.pass_fds = {channel, key.runner_fd()};
    if (ws > 0) spec.env["GPULAB_WARP_SIZE"] = std::to_string(ws);
    // The defences the runner applies itself (its GPU timing), switched off there too when asked.
    std::string runner_off;
    for (const char* name : {"device-sync", "l2-persistence"})
      if (!defence_enabled(name)) runner_off += (runner_off.empty() ? "" : ",") + std::string(name);
    if (!runner_off.empty()) spec.env["GPULAB_GRADER_DISABLE"] = runner_off;
    if (const char* w = std::getenv("GPULAB_EMU_WORKERS")) spec.env["GPULAB_EMU_WORKERS"] = w;
    if (opt.backend != "emu") {
      spec.devices = gpu_devices();
      spec.address_space_bytes = 0;  // GPU runtimes reserve terabytes of virtual address space
    } else {
      spec.address_space_bytes = std::size_t{32} << 30;
      // The emulated device's memory: an allocation beyond it fails with a message (as on a GPU),
      // not by exhausting the machine.
      spec.env["GPULAB_EMU_DEVICE_MEMORY_MB"] = defence_enabled("memory-limit") ? "8192" : "1000000";
      // Device memory closed to host code between runtime calls (gpulab/emu/runtime.hpp).
      if (!defence_enabled("host-access")) spec.env["GPULAB_EMU_HOST_ACCESS"] = "allow";
    }
    ProcessResult proc;
    {
      const GpuTurn turn(opt);
      if (opt.backend != "emu") lap("waiting for the GPU");
      proc = confined(argv, spec, opt.verbose);
    }
    key.close_runner_end();
    record.finish();
    lap("run");
    if (r.isolation.empty() || opt.impl == "solution") r.isolation = proc.isolation;

    std::string status = proc.describe();
    if (proc.timed_out)
      status += " (" + std::to_string(int(timeout)) + " s)";
    const std::string tail = tail_lines(proc.output, 12);
    // The judge appends verdicts: start from an empty file, whatever was there.
    if (defence_enabled("verdict-file")) {
      std::error_code ec;
      fs::remove(report_path, ec);
      ::close(::open(report_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    }
    std::vector<std::string> jargv{judge, "--rubric", lab.rubric, "--seed", opt.seed, "--impl", opt.impl,
                                   "--replay", record_path, "--report", report_path, "--runner-status", status,
                                   "--record-key", key.hex()};
    if (!first || opt.skip_performance) jargv.push_back("--no-performance");
    else if (!kernel_resources_path.empty()) jargv.insert(jargv.end(), {"--kernel-resources", kernel_resources_path});
    if (gpu_sanitizer) {
      // The GPU's sanitizer watches a whole process: a run of the sanitizer checks per tool.
      const std::string findings = work + "/gpu-findings.json";
      {
        const GpuTurn turn(opt);
        lap("waiting for the GPU");
        run_gpu_sanitizer(opt, lab, runner, work, timeout, findings, emu);
      }
      lap("sanitizer");
      jargv.insert(jargv.end(), {"--gpu-findings", findings});
    }
    std::map<std::string, std::string> jenv;
    if (ws > 0) jenv["GPULAB_WARP_SIZE"] = std::to_string(ws);
    const ProcessResult verdict = run_process(jargv, jenv, std::max(600.0, timeout), opt.verbose);
    collect(report_path, suffix, verdict, r, first);
    lap("judge");
    if (!proc.ok()) {
      // Say how the code under test ended, once, on the check it stopped in.
      std::string why = proc.timed_out
                            ? "\n  hint: an infinite loop, a thread spinning on a value another block or thread"
                              " never writes (there is no ordering between blocks), or work far slower than a GPU"
                              " kernel (a loop on the host, a copy or a synchronisation per call) at the largest"
                              " size the check names."
                            : (tail.empty() ? "" : "\n" + tail);
      for (auto& c : r.checks)
        if (!c.passed && c.name.size() >= suffix.size() &&
            c.name.compare(c.name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
            c.message.find("while running this check") != std::string::npos) {
          c.message += why;
          break;
        }
    }
    first = false;
    if (proc.timed_out && ws != opt.warp_sizes.back()) {
      // The other warp sizes would most likely hang too: do not spend their time limits.
      for (std::size_t i = 1; i < opt.warp_sizes.size(); ++i)
        for (const auto& [name, kind] : plan)
          if (kind != "performance")
            r.checks.push_back(failed_check(name + suffix_of(opt, opt.warp_sizes[i]), kind,
                                            "not run: the run at warp size " + std::to_string(ws) +
                                                " did not finish within the time limit"));
      break;
    }
  }
  complete_plan(plan, suffixes, r);
  if (opt.backend != "emu") host_work_verdict(emulator_report(emu, lab, opt, work), r);
  grade_performance_of_correct_kernels_only(r);
  if (opt.backend != "emu" && rubric.number_or("points", "portability", 0) > 0)
    r.checks.push_back(portability_check(lab, opt, work, emu));
  fail_all_if_tampered(r);
  if (emu.valid()) {
    emu.wait();
    lap("waiting for the emulator");
    r.seconds["portability (alongside)"] = std::chrono::duration<double>(emu_done - emu_started).count();
  }
  score(rubric, r);
  return r;
}

}  // namespace gpulab::grade
