// Running a child process with a time limit, its output captured, and everything it started
// stopped at the end. run_process is for the grader's own, trusted commands (cmake, nm); code from
// a hand-in goes through run_sandboxed (sandbox.hpp), which uses the same machinery underneath.
#pragma once

#include <sys/resource.h>

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gpulab::grade {

struct ProcessResult {
  int exit_code = -1;      ///< when it exited
  int signal = 0;          ///< when a signal ended it
  bool timed_out = false;  ///< stopped at the wall-clock limit (exit_code and signal say nothing then)
  std::string output;      ///< stdout and stderr, interleaved, as bytes (the tail, see output_truncated)
  bool output_truncated = false;  ///< the beginning of the output was dropped to keep the limit
  std::string isolation;          ///< how the child was confined ("bubblewrap (...)", ...)
  // The limits it ran under, so that describe() can say which one it hit (0: none).
  std::size_t memory_limit_bytes = 0;
  double cpu_limit_seconds = 0;
  std::size_t file_size_limit_bytes = 0;
  double cpu_seconds_used = 0;  ///< user + system time of the child and what it waited for

  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
  /// "exited with status 1", "was killed by signal 11 (Segmentation fault)", with the limit it
  /// hit when that can be told ("...: it ran out of its memory limit (512 MiB)").
  std::string describe() const;
};

/// Runs argv[0] (searched in the grader's PATH) with the grader's environment plus `env`, killing
/// it and every process it started after `timeout_seconds`. For trusted commands only: there is no
/// confinement beyond its own session.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env, double timeout_seconds,
                          bool echo = false);

/// The last `lines` lines of a text.
std::string tail_lines(const std::string& text, int lines);

namespace detail {

/// Everything the forked child does before exec, prepared by the parent (after fork() only
/// async-signal-safe calls are made: the grader may have threads).
struct ChildPlan {
  std::string path;                 ///< executable, absolute or relative to the grader's cwd
  std::vector<std::string> argv;
  std::vector<std::string> envp;    ///< the child's whole environment, "NAME=value"
  std::string workdir;              ///< chdir before exec (empty: stay)
  std::vector<std::pair<int, rlim_t>> rlimits;  ///< soft limits (hard = soft, or soft + 1 for CPU)
  std::vector<int> pass_fds;        ///< kept open, same numbers
  double timeout_seconds = 60;
  std::size_t output_limit = 1 << 20;
  bool echo = false;
  /// The child is a namespace wrapper (bwrap, unshare + sh) that reports a signal death of the
  /// program as exit status 128 + signal: turn it back into a signal.
  bool exit_status_encodes_signal = false;
};

/// Forks, runs the plan, drains the output with poll(), enforces the time limit and kills the
/// whole tree of descendants at the end (found through /proc, with the grader as their child
/// subreaper so that double-forked daemons come back to it). Never blocks for long: every wait
/// is bounded. Runs in several threads at once are kept apart (a run never stops another's child),
/// but a process orphaned by one of them may be stopped by whichever run ends first.
ProcessResult run_child(const ChildPlan& plan);

/// `name` searched in a PATH-like list (returned unchanged when it holds a '/' or is not found).
std::string search_path(const std::string& name, const std::string& path_list);

}  // namespace detail
}  // namespace gpulab::grade
