// Switches for the grader's defences against submissions that try to forge their grade.
//
// Every defence is on. GPULAB_GRADER_DISABLE=name[,name...] in the *grader's* environment turns
// named ones off; it exists only so that the adversarial suite (grader/tests/adversarial) can show
// that each cheat it holds succeeds once its defence is gone. The code under test never sees the
// grader's environment (it runs with a clean one), so it cannot switch anything off.
//
// Names: sandbox, includes, symbols, kernel-outputs, input-coverage, host-access, plan,
//        timed-outputs, reports, memory-limit, source-text, staging, handin-paths, record,
//        verdict-file, call-order, crafted-inputs, timed-runs, physical-floor, and the runner's
//        own (the grader passes them on): device-sync, l2-persistence.
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>

namespace gpulab::grade {

inline bool defence_enabled(const std::string& name) {
  const char* off = std::getenv("GPULAB_GRADER_DISABLE");
  if (!off || !*off) return true;
  std::stringstream list(off);
  for (std::string item; std::getline(list, item, ',');)
    if (item == name || item == "all") return false;
  return true;
}

}  // namespace gpulab::grade
