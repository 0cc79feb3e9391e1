// What a grade on a GPU back-end adds (gpu_grade.hpp): turns at the GPU, the emulator's grade of
// the same hand-in alongside, the GPU's sanitizer, the portability and host-work verdicts.
#include "gpu_grade.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "gpu_sanitizer.hpp"
#include "gpulab/grade/defences.hpp"
#include "handin.hpp"
#include "process.hpp"
#include "sandbox.hpp"
#include "scoring.hpp"

namespace fs = std::filesystem;

namespace gpulab::grade {

GpuTurn::GpuTurn(const GradeOptions& opt) {
  if (!is_gpu(opt.backend)) return;
  const char* named = std::getenv("GPULAB_GPU_LOCK");
  const std::string path = named && *named ? named : opt.build_dir + "/.gpulab-gpu.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ >= 0) ::flock(fd_, LOCK_EX);
}

GpuTurn::~GpuTurn() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<std::string> gpu_devices() {
  return {"/dev/nvidia*", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/kfd", "/dev/dri"};
}

nlohmann::json emulator_report(std::shared_future<nlohmann::json>& started, const LabInfo& lab,
                               const GradeOptions& opt, const std::string& work) {
  return started.valid() ? started.get() : emulator_grade(lab, opt, work);
}

namespace {

/// No GPU sanitizer (rocm): the emulator's findings, from its grade of this hand-in (where it
/// traces memory), as the GPU sanitizer's would be given to the judge.
nlohmann::json emulator_sanitizer_findings(const GradeOptions& opt, const LabInfo& lab, const std::string& work,
                                           std::shared_future<nlohmann::json>& emu) {
  nlohmann::json doc = nlohmann::json::object();
  const nlohmann::json report = emulator_report(emu, lab, opt, work);
  std::string why = report.contains("error") ? report["error"].get<std::string>() : "";
  nlohmann::json findings = nlohmann::json::array();
  bool measured = false;
  if (why.empty())
    for (const auto& k : report["labs"][0].value("checks", nlohmann::json::array())) {
      if (parse_check_kind(k.value("kind", "")) != CheckKind::sanitizer) continue;
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
        findings.push_back({{"kind", name(CheckKind::sanitizer)}, {"message", "on the emulator: " + message}, {"count", 1}});
    }
  if (measured) doc["findings"] = findings;
  else doc["not_measured"] = std::string("no GPU sanitizer runs on ") + name(opt.backend) + (why.empty() ? "" : "; " + why);
  return doc;
}

/// compute-sanitizer (`tool`), one process per sanitizer tool, all at once: nothing here is
/// timed, each tool watches its own process, and the four together take the time of the slowest
/// instead of the sum.
std::vector<ProcessResult> run_compute_sanitizer_tools(const GradeOptions& opt, const LabInfo& lab,
                                                       const std::string& tool, const std::string& runner,
                                                       const std::string& work, double timeout) {
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
                          lab.rubric, "--seed", opt.seed, "--impl", name(opt.impl), "--no-performance",
                          "--gtest_filter=sanitizer.*"},
                         spec, opt.verbose);
    });
  for (auto& t : threads) t.join();
  return runs;
}

/// compute-sanitizer's findings over its tools' runs, or why nothing was measured.
nlohmann::json compute_sanitizer_findings(const GradeOptions& opt, const LabInfo& lab, const std::string& runner,
                                          const std::string& work, double timeout) {
  nlohmann::json doc = nlohmann::json::object();
  const std::string tool = find_compute_sanitizer();
  if (tool.empty()) {
    doc["not_measured"] = "compute-sanitizer was not found (it comes with the CUDA Toolkit: put its bin/ on PATH)";
    return doc;
  }
  const std::vector<std::string>& tools = compute_sanitizer_tools();
  const std::vector<ProcessResult> runs = run_compute_sanitizer_tools(opt, lab, tool, runner, work, timeout);
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
  return doc;
}

}  // namespace

void run_gpu_sanitizer(const GradeOptions& opt, const LabInfo& lab, const std::string& runner, const std::string& work,
                       double timeout, const std::string& out_path, std::shared_future<nlohmann::json>& emu) {
  const nlohmann::json doc = traits(opt.backend).compute_sanitizer
                                 ? compute_sanitizer_findings(opt, lab, runner, work, timeout)
                                 : emulator_sanitizer_findings(opt, lab, work, emu);
  std::ofstream(out_path) << doc.dump(1);
}

/// The emulator's grade of the same hand-in at the other warp size (the warp size the GPU does
/// not have), correctness and sanitizer only: its JSON report, or why there is none ("error").
/// Made once per grade (cached in the work directory): the portability check and, on rocm, the
/// sanitizer check read it.
nlohmann::json emulator_grade(const LabInfo& lab, const GradeOptions& opt, const std::string& work) {
  const int warp = traits(opt.backend).portability_warp;
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
    if (opt.impl == Impl::solution) argv.insert(argv.end(), {"--impl", name(Impl::solution)});
    if (opt.impl == Impl::submission) argv.insert(argv.end(), {"--submission", opt.submission});
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
    if (!is(c, CheckKind::correctness)) continue;
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
  const int warp = traits(opt.backend).portability_warp;
  Check c;
  c.name = "portability.emulator_warp_" + std::to_string(warp);
  c.kind = name(CheckKind::portability);
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
    const std::optional<CheckKind> kind = parse_check_kind(k.value("kind", ""));
    const std::string message = k.value("message", "");
    // The emulator's sanitizer counts where it is measured (a clang-built emulator).
    if (kind != CheckKind::correctness && !(kind == CheckKind::sanitizer && message.rfind("not measured", 0) != 0)) continue;
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

}  // namespace gpulab::grade
