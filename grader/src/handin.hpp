// Building a hand-in: the code under test is staged, compiled and linked in the sandbox, in a
// directory of its own, with the exact flags of the lab's build, and vetted on the way (what it
// includes, what its object file defines and calls).
#pragma once

#include <string>
#include <vector>

#include "model.hpp"
#include "sandbox.hpp"

namespace gpulab::grade {

struct HandinBuild {
  bool ok = false;
  std::string executable;  ///< the runner: the lab's checks linked with the code under test
  std::string message;     ///< why it failed: compiler/linker lines, or the vetting rule broken
  std::string isolation;   ///< how the compiler ran
};

/// Stages `sources` (lab source name -> the file to compile, already resolved inside the
/// hand-in) into `work_dir`, compiles each with the lab's compile command, vets includes and
/// symbols, and links the runner. `display` maps each source to the path shown in messages.
HandinBuild build_handin(const std::string& build_dir, const LabInfo& lab, const std::vector<std::string>& files,
                         const std::string& work_dir, double timeout_seconds, bool verbose);

/// Registers per thread and static shared memory per block of every kernel in `files`, as nvcc
/// compiles them for `arch` (ptxas's --resource-usage, -O3, compile only), run in the sandbox with
/// the include directories of the repository's headers and the lab's: the occupancy input of the
/// performance model that grades the emulator's performance checks (kit::kernel_resources). A JSON
/// document for the judge's --kernel-resources: {"kernels": [{"kernel", "registers",
/// "shared_bytes"}...], "arch"} or {"not_measured": why}.
std::string kernel_resources(const std::string& build_dir, const LabInfo& lab, const std::vector<std::string>& files,
                             const std::string& work_dir, const std::string& arch, double timeout_seconds,
                             bool verbose);

/// The isolation settings shared by the compiler, the linker and the lab process: the source
/// and build trees read-only, `writable` the only writable place, a clean environment.
SandboxSpec base_sandbox(const std::string& build_dir, const std::string& writable, double timeout_seconds);

/// Runs code under test (or the tools that read it) in the best isolation this machine offers.
ProcessResult confined(const std::vector<std::string>& argv, const SandboxSpec& spec, bool echo = false);

/// Splits a shell command line as CMake writes it (quotes and backslashes), without a shell.
std::vector<std::string> split_command(const std::string& command);

/// The lines of a failed compile or link worth showing: each error with the lines that quote its
/// source, the notes that follow it, the linker's causes; warnings and their quoted lines are
/// left out (they are not why it failed). At most 25 lines; the output's last 25 where no error
/// line is found.
std::string compiler_errors(const std::string& output);

}  // namespace gpulab::grade
