// What a grade on a GPU back-end adds: turns at the GPU, the device nodes a lab process needs,
// the emulator's grade of the same hand-in run alongside (for the portability check, for the
// sanitizer where the GPU has none, and for where the work happened), and the GPU's sanitizer.
#pragma once

#include <future>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "labs.hpp"

namespace gpulab::grade {

/// On a GPU back-end, the lab processes of graders sharing a build tree (a class graded with
/// `./gpulab grade-class --jobs N`) take turns at the GPU: a timed section never shares the device
/// with another hand-in's kernels, while compiling and the emulator's portability run go on in
/// parallel. The emulator needs no turn. GPULAB_GPU_LOCK names another lock file (one per GPU
/// for graders in several build trees).
class GpuTurn {
 public:
  explicit GpuTurn(const GradeOptions& opt);
  ~GpuTurn();
  GpuTurn(const GpuTurn&) = delete;
  GpuTurn& operator=(const GpuTurn&) = delete;

 private:
  int fd_ = -1;
};

/// The device nodes a GPU lab process needs.
std::vector<std::string> gpu_devices();

/// The emulator's grade of the same hand-in at the other warp size, correctness and sanitizer
/// only: its JSON report, or why there is none ("error"). Cached in the work directory.
nlohmann::json emulator_grade(const LabInfo& lab, const GradeOptions& opt, const std::string& work);

/// The emulator's grade of this hand-in, started early by grade_lab so that it runs while the GPU
/// work goes on; made here if it was not started.
nlohmann::json emulator_report(std::shared_future<nlohmann::json>& started, const LabInfo& lab,
                               const GradeOptions& opt, const std::string& work);

/// Runs the sanitizer checks of a GPU grade under the GPU's own sanitizer, a process per tool,
/// and writes what it found (or why nothing was measured) for the judge (--gpu-findings).
void run_gpu_sanitizer(const GradeOptions& opt, const LabInfo& lab, const std::string& runner, const std::string& work,
                       double timeout, const std::string& out_path, std::shared_future<nlohmann::json>& emu);

/// A GPU grade takes the emulator's verdict on where the work happened (host code computing the
/// results fails every correctness check).
void host_work_verdict(const nlohmann::json& emulator, LabResult& r);

/// A GPU grade's portability check: the same hand-in on the emulator at the other warp size.
Check portability_check(const LabInfo& lab, const GradeOptions& opt, const std::string& work,
                        std::shared_future<nlohmann::json>& emu);

}  // namespace gpulab::grade
