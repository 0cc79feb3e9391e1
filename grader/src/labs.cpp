// Grading one lab (labs.hpp): the lab manifest, and grade_lab's steps -- build the judge, plan its
// checks, stage the code under test, run it in the sandbox once per warp size, judge each record,
// then apply the rules that cut across checks (scoring.cpp) and what a GPU grade adds (gpu_grade.cpp).
#include "labs.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gpu_grade.hpp"
#include "gpulab/grade/defences.hpp"
#include "gpulab/grade/rubric.hpp"
#include "handin.hpp"
#include "process.hpp"
#include "record_channel.hpp"
#include "sandbox.hpp"
#include "scoring.hpp"
#include "vetting.hpp"

namespace fs = std::filesystem;

namespace gpulab::grade {
namespace {

/// What the names of one run's checks end with: the emulator runs each warp size, a GPU only its own.
std::string suffix_of(const GradeOptions& opt, int warp) {
  return is_gpu(opt.backend) ? "" : " [warp " + std::to_string(warp) + "]";
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


/// Removes a grade's work directory when the grade ends (GPULAB_KEEP_HANDINS keeps it).
struct WorkDir {
  std::string dir;
  ~WorkDir() {
    std::error_code ec;
    if (!std::getenv("GPULAB_KEEP_HANDINS")) fs::remove_all(dir, ec);
  }
};

/// A grade in progress: what its steps share. Not copied or moved (the emulator's run, started
/// by start_emulator, writes emu_done).
struct Grading {
  Grading(const LabInfo& l, const GradeOptions& o)
      : lab(l), opt(o), rubric(Rubric::load(l.rubric)),
        work{o.build_dir + "/handins/" + l.id + "-" + name(o.impl) + "-" + std::to_string(::getpid())} {
    r.lab = lab.id;
    r.impl = name(opt.impl);
    timeout = opt.timeout_override > 0 ? opt.timeout_override : rubric.number_or("lab", "timeout_seconds", 120);
    build_timeout =
        opt.timeout_override > 0 ? opt.timeout_override : rubric.number_or("lab", "build_timeout_seconds", 300);
    for (int ws : opt.warp_sizes) suffixes.push_back(suffix_of(opt, ws));
  }
  Grading(const Grading&) = delete;
  Grading& operator=(const Grading&) = delete;

  /// Adds the time since the last lap to a phase of r.seconds.
  void lap(const std::string& phase) {
    const auto now = std::chrono::steady_clock::now();
    r.seconds[phase] += std::chrono::duration<double>(now - since).count();
    since = now;
  }

  const LabInfo& lab;
  const GradeOptions& opt;
  const Rubric rubric;
  double timeout = 0, build_timeout = 0;
  LabResult r;
  Plan plan;
  std::vector<std::string> suffixes;  ///< per warp size, what its checks' names end with
  std::string judge;                  ///< the trusted judge: the reference solution's executable
  std::string runner;                 ///< what runs the code under test
  std::string kernel_resources_path;  ///< emu, a model that needs occupancy: the kernels' resources
  std::string nvcc_view;              ///< emu: nvcc's answer on the code under test (JSON), "" if not asked
  std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now();
  // Declared in this order so that the emulator's run (emu) is waited for before the work
  // directory goes, and its times outlive it.
  WorkDir work;
  std::chrono::steady_clock::time_point emu_started, emu_done;
  std::shared_future<nlohmann::json> emu;
};

/// Step 0: the judge (the reference solution's executable: trusted code, built from the pristine
/// tree) and everything a hand-in links with. Returns its path.
std::string build_judge(const LabInfo& lab, const GradeOptions& opt) {
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
  return opt.build_dir + "/grader/labs/" + lab.id + "/" + judge_target;
}

/// The plan: the judge's checks, known before any code under test runs (none of performance with
/// --no-performance). Performance checks run at the first warp size only. max_score never
/// depends on what ran.
Plan plan_of(const Grading& g) {
  Plan plan = planned_checks(g.judge, g.lab.rubric);
  if (g.opt.skip_performance)
    plan.erase(std::remove_if(plan.begin(), plan.end(), [](const auto& c) { return c.kind == CheckKind::performance; }),
               plan.end());
  return plan;
}

/// Every planned check fails: the first with `message`, the others pointing at it.
LabResult fail_plan(Grading& g, const std::string& message) {
  for (std::size_t w = 0; w < g.opt.warp_sizes.size(); ++w)
    for (const auto& [name, kind] : g.plan)
      if (w == 0 || kind != CheckKind::performance)
        g.r.checks.push_back(failed_check(name + g.suffixes[w], kind,
                                          w == 0 && &name == &g.plan.front().name ? message
                                                                                  : "not run (the first check says why)"));
  score(g.rubric, g.r);
  return g.r;
}

/// A GPU grade's emulator run (the portability check; on rocm the sanitizer too) needs no GPU:
/// it starts now and goes on while the hand-in is built and run on the GPU. On a GPU the
/// emulator's grade of the same hand-in also says where the work happened (the GPU cannot see
/// host code computing the results: host_work_verdict), besides portability.
void start_emulator(Grading& g) {
  if (!is_gpu(g.opt.backend)) return;
  fs::create_directories(g.work.dir);
  g.emu_started = std::chrono::steady_clock::now();
  g.emu = std::async(std::launch::async, [&lab = g.lab, &opt = g.opt, work = g.work.dir, &done = g.emu_done] {
            nlohmann::json report = emulator_grade(lab, opt, work);
            done = std::chrono::steady_clock::now();
            return report;
          }).share();
}

/// A hand-in's files, resolved (in the submission, or the student's files in labs/); records them
/// in r.source. Returns why they cannot be graded, or "".
std::string handin_files(Grading& g, std::vector<std::string>& files) {
  const GradeOptions& opt = g.opt;
  for (const auto& s : g.lab.sources) {
    std::string file, resolved;
    if (opt.impl == Impl::submission) {
      const auto found = locate(opt.submission, g.lab, s);
      if (!found)
        return "the submission " + opt.submission + " has no " + s + " for lab " + g.lab.id +
               "\n  hint: pass the file itself, or a directory laid out like the repository"
               " (labs/" + g.lab.id + "/" + s + ")";
      file = found->string();
    } else {
      file = g.lab.lab_dir + "/" + s;
    }
    const std::string root = opt.impl == Impl::submission ? opt.submission : file;
    g.r.source += (g.r.source.empty() ? "" : ", ") + fs::absolute(file).string();
    if (!defence_enabled("handin-paths")) resolved = file;
    else if (const std::string bad = vetting::resolve_handin_file(root, file, resolved); !bad.empty())
      return bad;
    files.push_back(resolved);
  }
  return "";
}

/// Step 1: the code under test: the reference's own executable, or a hand-in built in the
/// sandbox. Returns why it cannot be graded, or "".
std::string stage_code_under_test(Grading& g) {
  g.runner = g.judge;
  if (g.opt.impl == Impl::solution) {
    for (const auto& s : g.lab.sources) g.r.source += (g.r.source.empty() ? "" : ", ") + g.lab.solution_dir + "/" + s;
    fs::create_directories(g.work.dir);
    return "";
  }
  std::vector<std::string> files;
  if (std::string bad = handin_files(g, files); !bad.empty()) return bad;
  const HandinBuild built = build_handin(g.opt.build_dir, g.lab, files, g.work.dir, g.build_timeout, g.opt.verbose);
  g.r.isolation = built.isolation;
  if (!built.ok) return built.message;
  g.runner = built.executable;
  g.lap("build");
  return "";
}

/// The emulator's grade asks nvcc (compile only, in the sandbox) for its view of the code under
/// test, for two things:
/// - whether a GPU build would compile it at all (refused_by_gpu_compiler): the emulator builds
///   with clang, which accepts code nvcc refuses, and a grade that a GPU would not give is no grade;
/// - where the rubric's model of a GPU needs occupancy (performance.emu model_arch: labs 01, 02, 04,
///   06), the kernels' registers, static shared memory and loads per loop trip, for the judge.
/// The files are those the build compiled (a hand-in's staged copies) or the reference's (which
/// needs no first answer: it is built by nvcc wherever the cuda back-end is).
void write_kernel_resources(Grading& g) {
  if (is_gpu(g.opt.backend)) return;
  const std::optional<std::string> arch = g.rubric.text("performance.emu", "model_arch");
  const bool for_model = arch && !g.opt.skip_performance;
  const bool for_gate = g.opt.impl != Impl::solution && defence_enabled("gpu-compiler");
  if (!for_model && !for_gate) return;
  std::vector<std::string> compiled;
  for (const auto& s : g.lab.sources)
    compiled.push_back(g.opt.impl == Impl::solution ? g.lab.solution_dir + "/" + s : g.work.dir + "/src/" + s);
  g.nvcc_view = kernel_resources(g.opt.build_dir, g.lab, compiled, g.work.dir, arch.value_or("sm_90"),
                                 g.build_timeout, g.opt.verbose);
  if (for_model) {
    g.kernel_resources_path = g.work.dir + "/kernel-resources.json";
    std::ofstream(g.kernel_resources_path) << g.nvcc_view;
  }
  g.lap("build");
}

/// Why the code under test gets nothing on the emulator: nvcc, here, refuses a file that clang
/// compiled, so a GPU build would not compile the hand-in (defence gpu-compiler). "" when nvcc
/// compiled it, or when this machine has no usable nvcc (the report's info says so).
std::string refused_by_gpu_compiler(Grading& g) {
  if (g.nvcc_view.empty() || g.opt.impl == Impl::solution || !defence_enabled("gpu-compiler")) return "";
  const nlohmann::json doc = nlohmann::json::parse(g.nvcc_view, nullptr, false);
  if (!doc.is_object()) return "";
  const std::string nvcc = doc.value("nvcc", "");
  if (nvcc == "absent" || nvcc == "unusable") {
    g.r.info["gpu_compiler"] = "not checked: " + doc.value("not_measured", std::string()) +
                               "; code that clang accepts and nvcc refuses is not caught";
    return "";
  }
  if (nvcc != "failed") return "";
  return "does not compile for a GPU: " + doc.value("not_measured", std::string("nvcc refused it")) +
         "\n  hint: the emulator builds with clang, which accepts code that nvcc (a CUDA grade's compiler) refuses:"
         " arithmetic on float4 and the other vector types, constexpr host functions such as std::min, std::max or"
         " std::clamp called in a kernel. On a GPU this file would not build and would score nothing; write it so"
         " that nvcc compiles it. To try, no GPU needed: nvcc -std=c++17 --extended-lambda -arch=sm_90 -cubin"
         " -o /dev/null -I common/include -I labs/" + g.lab.id + " <your file>";
}

/// One run of the code under test at one warp size (ws: 0 on a GPU), and its judging.
struct WarpRun {
  int ws;
  std::string suffix, record_path, report_path;
  bool first;  ///< the first warp size: the only one with performance checks
};

/// The sandbox of a run: the record's pipe and key, the warp size, the defences the runner
/// applies itself, and the back-end's devices and memory limits.
SandboxSpec run_spec(const Grading& g, const WarpRun& w, int channel, int key_fd) {
  SandboxSpec spec = base_sandbox(g.opt.build_dir, g.work.dir + "/run", g.timeout);
  fs::create_directories(g.work.dir + "/run");
  spec.pass_fds = {channel, key_fd};
  if (w.ws > 0) spec.env["GPULAB_WARP_SIZE"] = std::to_string(w.ws);
  // The run that measures for a prediction at a larger size sees a GPU scaled down with the
  // problem (performance.emu measured_multiprocessors): a size rule in the code under test then
  // takes the path it would take at the predicted size. The other warp size's run keeps the whole
  // GPU, so the correctness checks see both paths.
  if (!is_gpu(g.opt.backend) && w.first && !g.opt.skip_performance)
    if (const double sms = g.rubric.number_or("performance.emu", "measured_multiprocessors", 0); sms >= 1)
      spec.env["GPULAB_EMU_MULTIPROCESSORS"] = std::to_string(static_cast<int>(sms));
  // The defences the runner applies itself (its GPU timing), switched off there too when asked.
  std::string runner_off;
  for (const char* name : {"device-sync", "l2-persistence"})
    if (!defence_enabled(name)) runner_off += (runner_off.empty() ? "" : ",") + std::string(name);
  if (!runner_off.empty()) spec.env["GPULAB_GRADER_DISABLE"] = runner_off;
  if (const char* workers = std::getenv("GPULAB_EMU_WORKERS")) spec.env["GPULAB_EMU_WORKERS"] = workers;
  if (is_gpu(g.opt.backend)) {
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
  return spec;
}

/// Step 2: runs the code under test in the sandbox, recording into a file only the grader can see.
ProcessResult run_in_sandbox(Grading& g, const WarpRun& w, RecordChannel& record, RecordKey& key) {
  const int channel = record.write_end();
  std::vector<std::string> argv{g.runner,    "--rubric", g.lab.rubric, "--seed", g.opt.seed, "--impl", name(g.opt.impl),
                                "--channel", std::to_string(channel), "--record-key-fd", std::to_string(key.runner_fd())};
  if (!w.first || g.opt.skip_performance) argv.push_back("--no-performance");
  const SandboxSpec spec = run_spec(g, w, channel, key.runner_fd());
  ProcessResult proc;
  {
    const GpuTurn turn(g.opt);
    if (is_gpu(g.opt.backend)) g.lap("waiting for the GPU");
    proc = confined(argv, spec, g.opt.verbose);
  }
  key.close_runner_end();
  record.finish();
  g.lap("run");
  if (g.r.isolation.empty() || g.opt.impl == Impl::solution) g.r.isolation = proc.isolation;
  return proc;
}

/// The judge's command line for a run's record.
std::vector<std::string> judge_argv(const Grading& g, const WarpRun& w, const ProcessResult& proc, const RecordKey& key) {
  std::string status = proc.describe();
  if (proc.timed_out) status += " (" + std::to_string(int(g.timeout)) + " s)";
  std::vector<std::string> argv{g.judge, "--rubric", g.lab.rubric, "--seed", g.opt.seed, "--impl", name(g.opt.impl),
                                "--replay", w.record_path, "--report", w.report_path, "--runner-status", status,
                                "--record-key", key.hex()};
  if (!w.first || g.opt.skip_performance) argv.push_back("--no-performance");
  else if (!g.kernel_resources_path.empty()) argv.insert(argv.end(), {"--kernel-resources", g.kernel_resources_path});
  return argv;
}

/// Step 3: judges a run's record with the trusted judge (on a GPU with sanitizer checks, after the
/// GPU's sanitizer ran them) and collects the verdicts.
void judge_run(Grading& g, const WarpRun& w, const ProcessResult& proc, const RecordKey& key) {
  // The judge appends verdicts: start from an empty file, whatever was there.
  if (defence_enabled("verdict-file")) {
    std::error_code ec;
    fs::remove(w.report_path, ec);
    ::close(::open(w.report_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  }
  std::vector<std::string> argv = judge_argv(g, w, proc, key);
  const bool gpu_sanitizer =
      is_gpu(g.opt.backend) &&
      std::any_of(g.plan.begin(), g.plan.end(), [](const auto& c) { return c.kind == CheckKind::sanitizer; });
  if (gpu_sanitizer) {
    // The GPU's sanitizer watches a whole process: a run of the sanitizer checks per tool.
    const std::string findings = g.work.dir + "/gpu-findings.json";
    {
      const GpuTurn turn(g.opt);
      g.lap("waiting for the GPU");
      run_gpu_sanitizer(g.opt, g.lab, g.runner, g.work.dir, g.timeout, findings, g.emu);
    }
    g.lap("sanitizer");
    argv.insert(argv.end(), {"--gpu-findings", findings});
  }
  std::map<std::string, std::string> env;
  if (w.ws > 0) env["GPULAB_WARP_SIZE"] = std::to_string(w.ws);
  const ProcessResult verdict = run_process(argv, env, std::max(600.0, g.timeout), g.opt.verbose);
  collect(w.report_path, w.suffix, verdict, g.r, w.first);
  g.lap("judge");
}

/// Says how the code under test ended, once, on the check of this run it stopped in.
void say_how_it_ended(LabResult& r, const ProcessResult& proc, const std::string& suffix) {
  if (proc.ok()) return;
  const std::string tail = tail_lines(proc.output, 12);
  const std::string why = proc.timed_out
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

/// After a run at warp size `ws` ran out of time: the other warp sizes would most likely hang
/// too, so their checks fail unrun instead of spending their time limits.
void fail_other_warp_sizes(Grading& g, int ws) {
  for (std::size_t i = 1; i < g.opt.warp_sizes.size(); ++i)
    for (const auto& [name, kind] : g.plan)
      if (kind != CheckKind::performance)
        g.r.checks.push_back(failed_check(name + g.suffixes[i], kind,
                                          "not run: the run at warp size " + std::to_string(ws) +
                                              " did not finish within the time limit"));
}

/// Steps 2 and 3 for each warp size.
void run_and_judge(Grading& g) {
  for (std::size_t i = 0; i < g.opt.warp_sizes.size(); ++i) {
    const int ws = g.opt.warp_sizes[i];
    const WarpRun w{ws, g.suffixes[i], g.work.dir + "/record-" + std::to_string(ws) + ".bin",
                    g.work.dir + "/verdicts-" + std::to_string(ws) + ".tsv", i == 0};
    RecordChannel record(w.record_path);
    RecordKey key;
    const ProcessResult proc = run_in_sandbox(g, w, record, key);
    judge_run(g, w, proc, key);
    say_how_it_ended(g.r, proc, w.suffix);
    if (proc.timed_out && ws != g.opt.warp_sizes.back()) {
      fail_other_warp_sizes(g, ws);
      break;
    }
  }
}

/// Step 4: the plan held to the verdicts, the rules across checks, what a GPU grade adds, points.
void conclude(Grading& g) {
  LabResult& r = g.r;
  complete_plan(g.plan, g.suffixes, r);
  if (is_gpu(g.opt.backend)) host_work_verdict(emulator_report(g.emu, g.lab, g.opt, g.work.dir), r);
  grade_performance_of_correct_kernels_only(r);
  if (is_gpu(g.opt.backend) && g.rubric.number_or("points", name(CheckKind::portability), 0) > 0)
    r.checks.push_back(portability_check(g.lab, g.opt, g.work.dir, g.emu));
  fail_all_if_tampered(r);
  if (g.emu.valid()) {
    g.emu.wait();
    g.lap("waiting for the emulator");
    r.seconds["portability (alongside)"] = std::chrono::duration<double>(g.emu_done - g.emu_started).count();
  }
  score(g.rubric, r);
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
  Grading g(lab, opt);
  g.judge = build_judge(lab, opt);
  g.plan = plan_of(g);
  start_emulator(g);
  g.lap("plan");
  if (const std::string bad = stage_code_under_test(g); !bad.empty()) return fail_plan(g, bad);
  write_kernel_resources(g);
  if (const std::string bad = refused_by_gpu_compiler(g); !bad.empty()) return fail_plan(g, bad);
  run_and_judge(g);
  conclude(g);
  return g.r;
}

}  // namespace gpulab::grade
