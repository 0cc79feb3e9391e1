// Switches for the grader's defences against submissions that try to forge their grade.
//
// Every defence is on. GPULAB_GRADER_DISABLE=name[,name...] in the *grader's* environment turns
// named ones off; it exists only so that the adversarial suite (grader/tests/adversarial) can show
// that each cheat it holds succeeds once its defence is gone. The code under test never sees the
// grader's environment (it runs with a clean one), so it cannot switch anything off.
//
// Names: sandbox, includes, symbols, kernel-outputs, input-coverage, host-access, plan,
//        timed-outputs, reports, memory-limit, source-text, staging, handin-paths, record,
//        verdict-file, device-to-host, host-work-on-gpu, record-mac, compiler-output,
//        prediction-required, prediction-ceiling, atomic-traffic, call-order, crafted-inputs,
//        timed-runs, physical-floor, gpu-compiler,
//        the runner's own (the grader passes them on): device-sync, l2-persistence,
//        and the emulator's own (emulator_defences_off): instrumentation, device-calls,
//        static-data, cross-block-races.
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

/// The emulator's defences switched off, as GPULAB_EMU_DISABLE wants them ("a,b"; empty when all
/// are on). They act in the compiler (the device pass: instrumentation, device-calls) and in the
/// code under test (static-data, cross-block-races), which run with a clean environment: the
/// grader passes this to both.
inline std::string emulator_defences_off() {
  std::string off;
  for (const char* name : {"instrumentation", "device-calls", "static-data", "cross-block-races"})
    if (!defence_enabled(name)) off += (off.empty() ? "" : ",") + std::string(name);
  return off;
}

}  // namespace gpulab::grade
