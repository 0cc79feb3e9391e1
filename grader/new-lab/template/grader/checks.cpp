// Lab @NN@ checks: @TITLE@. Every call goes through the lab kit (gpulab/grade/kit.hpp), which
// poisons and guards the outputs, checks that inputs come back unchanged and, on the emulator,
// that kernels did the work; this file only says what is right and what is fast.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "@FUNC@.hpp"
#include "gpulab/grade/compare.hpp"
#include "gpulab/grade/defences.hpp"
#include "gpulab/grade/harness.hpp"
#include "gpulab/grade/inputs.hpp"
#include "gpulab/grade/kit.hpp"
#include "gpulab/grade/timing.hpp"
#include "gpulab/host.hpp"

namespace {
using namespace gpulab;
using namespace gpulab::grade;

/// `set` > 0: another stream of the check's generator (rng() starts from the same state at every
/// call of a check, and two data sets of one check must differ).
std::vector<float> random_values(int n, int set = 0) {
  auto gen = rng();
  if (set > 0) gen.seed(gen() + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(set));
  kit::UniformReal<float> d{-1.0f, 1.0f};  // std::uniform_real_distribution's values, 8x faster
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = d(gen);
  return v;
}

/// One call on x; returns max |error| / tolerance (2x is exact in floating point).
double check_values(kit::Call& call, const std::vector<float>& x, bool compare = true) {
  const int n = static_cast<int>(x.size());
  const float* d_x = call.input(x, "x");
  float* d_y = call.output<float>(static_cast<std::size_t>(n), "y");
  if (!call.run([&] { @FUNC@(d_x, d_y, n); })) return INFINITY;
  if (!compare) return 0;
  std::vector<double> ref(x.begin(), x.end()), tol(x.size(), 0.0);
  for (double& r : ref) r *= 2;
  const Comparison c = compare_all(call.result(d_y), ref, tol, [](std::size_t i) { return "y[" + std::to_string(i) + "]"; });
  if (!c.ok) ADD_FAILURE() << c.bad << " of " << n << " elements are wrong; first: " << c.first_message;
  return c.worst_ratio;
}

/// One call on fresh inputs of n elements.
double check_size(kit::Call& call, int n, bool compare = true) { return check_values(call, random_values(n), compare); }

void check_sizes(const std::vector<int>& sizes) {
  double worst = 0;
  for (int n : sizes) {
    kit::Call call("@FUNC@(n = " + std::to_string(n) + ")");
    worst = std::max(worst, check_size(call, n));
  }
  record(worst, 1.0, "error/tolerance");
}

}  // namespace

TEST(correctness, tiny_sizes) { check_sizes({1, 2, 3, 31, 33}); }

TEST(correctness, block_size_boundaries) { check_sizes({255, 256, 257, 1023, 1025, 4099}); }

// Calls are functions of their arguments: A, B, A again through the same device buffers.
TEST(correctness, interleaved_calls) {
  const std::vector<float> sets[2] = {random_values(1000, 1), random_values(1000, 2)};
  kit::check_interleaved_calls({{"@FUNC@", [&](int set, kit::Slots& slots) {
                                   kit::Call call("@FUNC@(n = 1000, " + kit::data_set_name(set) + ")", slots);
                                   return check_values(call, sets[set]) <= 1;
                                 }}});
}

// Every back-end: the emulator's findings, or a GPU's sanitizer's (run by the grader).
TEST(sanitizer, no_memory_errors_or_races) {
  std::vector<std::unique_ptr<kit::Call>> calls;
  for (int n : {1, 257, 1000}) {
    calls.push_back(std::make_unique<kit::Call>("@FUNC@(n = " + std::to_string(n) + ")", false));
    check_size(*calls.back(), n, false);
  }
  kit::judge_findings({calls[0].get(), calls[1].get(), calls[2].get()});
}

#if defined(GPULAB_BUILD_BACKEND_EMU)

TEST(performance, coalesced_global_loads) {
  const int n = static_cast<int>(rubric().number("performance.emu", "size"));
  const double min_eff = rubric().number("performance.emu", "min_load_efficiency");
  kit::Call call("@FUNC@(n = " + std::to_string(n) + ", measured)");
  if (!(check_size(call, n, defence_enabled("timed-outputs")) <= 1)) return;
  const kit::Evidence& e = call.evidence();
  if (!e.available) return not_measured("this emulator build has no memory-access tracing (use clang++)");
  kit::report_metrics(call);
  const double least = std::ceil(4.0 * n / 32.0);
  const double eff = e.load_sectors ? std::min(1.0, least / static_cast<double>(e.load_sectors)) : 0.0;
  record(eff, min_eff, "load efficiency");
  suggest_threshold("min_load_efficiency", eff, 0.8);
  std::ostringstream os;
  os << "the kernels' global loads moved " << e.load_sectors << " sectors for " << n << " floats that need "
     << least;
  if (eff < min_eff) ADD_FAILURE() << os.str() << "\n  hint: neighbouring threads should read neighbouring floats";
  else note(os.str());
}

#else  // GPU back-ends

TEST(performance, bandwidth_vs_copy) {
  const std::string section = backend_section("performance");
  const int n = static_cast<int>(rubric().number(section, "size"));
  const double min_fraction = rubric().number(section, "min_fraction_of_copy");
  // Two input sets taking turns in one buffer, every sampled run's y against its set's 2x
  // (kit::TimedCall), and the physical floor of 4n bytes read and 4n written.
  const std::vector<float> x[2] = {random_values(n, 1), random_values(n, 2)};
  std::vector<float> want[2];
  for (int set = 0; set < 2; ++set)
    for (float v : x[set]) want[set].push_back(2 * v);
  kit::TimedCall timed("@FUNC@", 2);
  const float* d_x = timed.rotated<float>({&x[0], &x[1]});
  float* d_y = timed.output<float>(static_cast<std::size_t>(n));
  timed.check<float>(d_y, {&want[0], &want[1]}, 0.0, "y");
  const kit::Ratio r = kit::measure_ratio(min_fraction, [&] {
    const Timing t = timed.time([&] { @FUNC@(d_x, d_y, n); }, kit::Work{4.0 * n, 4.0 * n, 1.0 * n});
    const double ceiling = kit::measured("copy bandwidth", [&] { return copy_bandwidth(std::size_t{8} * static_cast<std::size_t>(n)); });
    const double bw = 8.0 * n / (t.median_ms * 1e-3);
    return kit::Ratio{bw / ceiling, t.rse + 0.01, std::to_string(bw / ceiling) + " of the copy bandwidth"};
  });
  kit::Call call("@FUNC@(n = " + std::to_string(n) + ", timed inputs)");
  if (!(check_size(call, n, defence_enabled("timed-outputs")) <= 1)) return;
  record(r.value, min_fraction, "of copy bandwidth");
  suggest_threshold("min_fraction_of_copy", r.value, 0.8);
  if (r.value < min_fraction) ADD_FAILURE() << r.text << ", below " << min_fraction;
  else note(r.text);
}

#endif
