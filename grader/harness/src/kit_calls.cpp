// The lab kit's rule that calls are functions of their arguments (gpulab/grade/kit.hpp,
// check_interleaved_calls): device buffers kept across calls, and the interleaving of calls on two
// data sets through them.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "gpulab/grade/defences.hpp"
#include "gpulab/grade/harness.hpp"
#include "gpulab/grade/kit.hpp"
#include "gpulab/host.hpp"

namespace gpulab::grade::kit {

Slots::~Slots() {
  if (judging()) return;
  for (auto& [name, slot] : slots_) device_free(slot.device);
}

void* Slots::take(const std::string& name, std::size_t bytes) {
  Slot& slot = slots_[name];
  if (judging()) {
    // Never dereferenced: any distinct address will do, stable per slot like the runner's.
    static std::uintptr_t next = 0x7000000;
    if (!slot.device) slot.device = reinterpret_cast<void*>(next += 0x1000);
    return slot.device;
  }
  if (!slot.device || slot.bytes < bytes) {
    device_free(slot.device);
    slot.device = nullptr;  // if the allocation throws, the destructor frees nothing twice
    slot.device = device_malloc(std::max<std::size_t>(bytes, 1));
    slot.bytes = bytes;
  }
  return slot.device;
}

std::string data_set_name(int set) { return std::string("data set ") + (set == 0 ? "A" : "B"); }

namespace {

/// "particles_to_layout on A, B, A again; particle_distances on A": the calls made so far.
std::string history_text(const std::vector<std::pair<std::string, int>>& calls) {
  std::ostringstream os;
  std::string function;
  int seen_a = 0;
  for (const auto& [f, set] : calls) {
    if (f != function) {
      os << (function.empty() ? "" : "; ") << f << " on ";
      function = f;
      seen_a = 0;
    } else {
      os << ", ";
    }
    os << (set == 0 ? "A" : "B") << (set == 0 && seen_a++ ? " again" : "");
  }
  return os.str();
}

/// Runs one interleaved call, catching the failures it adds (the comparisons' and the kit's
/// rules'); returns them, empty when the call was right.
std::vector<std::string> intercepted_call(const InterleavedStep& step, int set, Slots& slots) {
  ::testing::TestPartResultArray failures;
  bool right = false;
  {
    ::testing::ScopedFakeTestPartResultReporter catcher(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    right = step.call(set, slots);
  }
  std::vector<std::string> messages;
  for (int i = 0; i < failures.size(); ++i) {
    if (!failures.GetTestPartResult(i).failed()) continue;
    std::string m = failures.GetTestPartResult(i).message();
    if (m.rfind("Failed\n", 0) == 0) m.erase(0, 7);  // ADD_FAILURE's own first line
    messages.push_back(m);
  }
  if (!right && messages.empty()) messages.push_back("its results are wrong");
  return messages;
}

}  // namespace

void check_interleaved_calls(const std::vector<InterleavedStep>& steps) {
  Slots slots;
  std::vector<std::pair<std::string, int>> made;
  int wrong = 0;
  std::ostringstream shown;
  for (const InterleavedStep& step : steps)
    for (int set : {0, 1, 0}) {
      const std::vector<std::string> failures = intercepted_call(step, set, slots);
      if (!failures.empty() && wrong++ < 2) {
        shown << step.function << " on " << data_set_name(set);
        if (made.empty()) shown << " was wrong (the first call of this check):";
        else shown << " was wrong when called after " << history_text(made) << ", on the same device buffers as those calls:";
        for (std::size_t k = 0; k < failures.size() && k < 3; ++k) shown << "\n  " << failures[k];
        shown << "\n";
      }
      made.emplace_back(step.function, set);
    }
  record(wrong, 0, "wrong interleaved calls");
  if (wrong == 0 || !defence_enabled("call-order")) return;
  ADD_FAILURE() << shown.str() << (wrong > 2 ? "(and " + std::to_string(wrong - 2) + " more wrong calls)\n" : "")
                << "every call must depend on its arguments only (the contract): the same calls on fresh buffers"
                   " are right (the other checks), here data set A and B went through the same device buffers in turn"
                << "\n  hint: keep no state between calls: no static cache or memo (an address says nothing of what"
                   " it holds now), no private copy of an earlier call's data (read what the arguments hold), no"
                   " work left for the next call";
}

}  // namespace gpulab::grade::kit
