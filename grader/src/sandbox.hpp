// Running untrusted code (a hand-in's lab binary) confined: a clean environment, resource limits,
// its own namespaces where the machine allows them, and nothing of it left running afterwards.
//
// Three ways, best first (best_isolation() probes them once):
//  - bubblewrap: user, pid, mount, ipc, uts, cgroup and network namespaces; only the listed paths
//    exist inside, read-only except `writable`; private /tmp and /dev; no capabilities.
//  - unshare (util-linux, for machines without bubblewrap): user, pid, mount, ipc, uts and network
//    namespaces; a shell wrapper inside makes every mount read-only except `writable`, and gives
//    it a private /tmp and a /dev holding only the standard nodes and `devices`, then drops all
//    capabilities. The rest of the file system stays visible (read-only). Where the remounting is
//    refused it falls back to the namespaces alone and says "tree writable".
//  - rlimits: no namespaces; its own session, resource limits and a clean environment. It can
//    read and write what the grader's user can, reach the network and signal the grader.
// In every mode the whole process tree is killed when the run ends (see process.hpp).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "process.hpp"

namespace gpulab::grade {

struct SandboxSpec {
  std::vector<std::string> read_only;     ///< paths bound read-only (the source tree, the build tree)
  std::vector<std::string> writable;      ///< paths bound read-write (created if missing)
  std::vector<std::string> devices;       ///< device nodes to bind (/dev/nvidia*, /dev/kfd, /dev/dri); globs
  std::map<std::string, std::string> env; ///< the child's WHOLE environment; pass PATH explicitly
  std::string workdir;                    ///< chdir inside
  double timeout_seconds = 60;            ///< wall clock; the whole process tree is killed
  double cpu_seconds = 0;                 ///< RLIMIT_CPU (0: twice the time limit)
  std::size_t address_space_bytes = 0;    ///< RLIMIT_AS (0: none; CUDA/ROCm need a huge one)
  std::size_t file_size_bytes = 256u << 20;  ///< RLIMIT_FSIZE (0: none)
  int max_processes = 256;                ///< RLIMIT_NPROC, per user (0: none; root is exempt)
  std::size_t output_limit = 1u << 20;    ///< keep at most this much stdout+stderr (the tail)
  std::vector<int> pass_fds;              ///< extra fds kept open in the child, same numbers
  bool allow_network = false;
};

enum class Isolation { bubblewrap, unshare, rlimits };

std::string to_string(Isolation);

/// What a mode gives on this machine (probed once, by running `true` in it; cached).
struct IsolationInfo {
  bool available = false;
  bool read_only_tree = false;   ///< paths outside `writable` (and /tmp) cannot be written
  bool hidden_tree = false;      ///< paths not listed do not exist inside
  bool private_network = false;  ///< only a loopback device of its own (when !allow_network)
  bool private_pids = false;     ///< cannot see or signal processes outside (the grader)
  std::string description;       ///< what ProcessResult::isolation says
};
IsolationInfo isolation_info(Isolation);

/// The best available: bubblewrap, else unshare, else rlimits (always available).
Isolation best_isolation();

/// Runs argv (argv[0] searched in spec.env's PATH inside) confined by best_isolation().
ProcessResult run_sandboxed(const std::vector<std::string>& argv, const SandboxSpec& spec,
                            bool echo = false);

/// The same in a given mode (tests, and forcing a weaker one); an unavailable mode is not run:
/// the result says why (exit_code -1, output).
ProcessResult run_sandboxed(Isolation mode, const std::vector<std::string>& argv,
                            const SandboxSpec& spec, bool echo = false);

}  // namespace gpulab::grade
