// Grading one lab: build the implementation, run its checks in a child process, score them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model.hpp"
#include "types.hpp"

namespace gpulab::grade {

struct GradeOptions {
  Backend backend = Backend::emu;
  std::string build_dir;
  Impl impl = Impl::student;
  std::string submission;        ///< file or directory, when impl == submission
  std::vector<int> warp_sizes;   ///< emu: each run's warp size; GPU: {0}
  std::string seed;
  double timeout_override = 0;   ///< seconds; 0 = the rubric's
  bool verbose = false;
  bool skip_performance = false; ///< plan and run no performance checks (a GPU grade's emulator run)
  std::string emu_build;         ///< GPU grades: the emulator's build tree ("" = build/emu or build/emu-gcc)
};

std::vector<LabInfo> read_manifest(const std::string& build_dir);
/// "01", "1", "01-coalescing" or "coalescing" -> the lab; nullopt when none matches.
std::optional<LabInfo> find_lab(const std::vector<LabInfo>& labs, const std::string& name);

LabResult grade_lab(const LabInfo& lab, const GradeOptions& opt);

}  // namespace gpulab::grade
