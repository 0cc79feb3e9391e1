// Running a child process with a time limit, its output captured.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gpulab::grade {

struct ProcessResult {
  int exit_code = -1;   ///< when it exited
  int signal = 0;       ///< when a signal ended it
  bool timed_out = false;
  std::string output;   ///< stdout and stderr, interleaved (the last 64 KiB)
  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
  std::string describe() const;  ///< "exited with status 1", "killed by SIGSEGV", ...
};

/// Runs argv[0] (searched in PATH) with extra environment variables, killing its whole process
/// group after `timeout_seconds`.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env, double timeout_seconds,
                          bool echo = false);

/// The last `lines` lines of a text.
std::string tail_lines(const std::string& text, int lines);

}  // namespace gpulab::grade
