// Lab 00 checks: y = a*x + y must be right for every n, on a grid the code chooses (scale_add) and
// on the caller's grid (scale_add_grid_stride) (correctness); free of memory bugs (sanitizer); and
// done by many threads taking neighbouring elements: on the emulator by the sectors its loads
// move, on a GPU by its bandwidth against a copy kernel measured in the same run (performance).
// Every call goes through the lab kit (gpulab/grade/kit.hpp), which uploads x and checks it comes
// back unchanged, fills y with its "before" values and a guard zone after it, and on the emulator
// checks that kernels did the work. A wrong result is diagnosed: elements never written, the old
// y dropped, an element updated several times.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "first_kernels.hpp"
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

enum class Values { real, integer };

/// One problem: the scale, x, and y as it is before the call.
struct Problem {
  float a = 0;
  std::vector<float> x, y;
  bool exact = false;  ///< integer-valued: a*x + y is exact in float, fused or not
  int n() const { return static_cast<int>(x.size()); }
};

/// Fresh random inputs for every call (kit::fresh_key). Real: a in +-[0.5, 2), x and y uniform in
/// [-1, 1). Integer: a in {-4, -2, 2, 4}, x a non-zero integer in [-8, 8], y odd in [-7, 7]: every
/// result is a small integer, exact in float, and the mistakes diagnose() names cannot be taken
/// for one another (a*x is even and never 0, so the right y, the old y and multiples of a*x differ).
Problem make_problem(int n, Values kind) {
  const std::uint64_t key = kit::fresh_key();
  auto bits = [key](std::uint64_t i) { return kit::bits_at(key, i); };
  auto unit = [&](std::uint64_t i) { return static_cast<float>(bits(i) >> 40) * 0x1p-24f; };  // [0, 1)
  Problem p;
  p.exact = kind == Values::integer;
  p.x.resize(static_cast<std::size_t>(n));
  p.y.resize(static_cast<std::size_t>(n));
  const std::uint64_t at_a = 2 * static_cast<std::uint64_t>(n);
  if (p.exact) {
    const float scales[4] = {-4, -2, 2, 4};
    p.a = scales[bits(at_a) >> 62];
  } else {
    p.a = (bits(at_a) >> 63 ? -1.0f : 1.0f) * (0.5f + 1.5f * unit(at_a + 1));
  }
  kit::for_chunks(n, [&](long long, long long b, long long e) {
    for (long long i = b; i < e; ++i) {
      const auto k = static_cast<std::uint64_t>(i);
      if (p.exact) {
        const int x = static_cast<int>(bits(2 * k) % 16) - 8;  // -8 ... 7, then 0 -> 8
        p.x[k] = static_cast<float>(x == 0 ? 8 : x);
        p.y[k] = static_cast<float>(2 * static_cast<int>(bits(2 * k + 1) % 8) - 7);  // -7, -5, ..., 7
      } else {
        p.x[k] = 2.0f * unit(2 * k) - 1.0f;
        p.y[k] = 2.0f * unit(2 * k + 1) - 1.0f;
      }
    }
  });
  return p;
}

/// Which function a call exercises: scale_add, or scale_add_grid_stride on the caller's grid.
struct Launch {
  int blocks = 0, threads = 0;  ///< 0: scale_add (the code chooses its grid)
  bool grid_stride() const { return blocks > 0; }
  std::string name(int n, const std::string& extra = "") const {
    std::string s = grid_stride() ? "scale_add_grid_stride(n = " + std::to_string(n) + ", " + std::to_string(blocks) +
                                        " block(s) x " + std::to_string(threads) + " threads"
                                  : "scale_add(n = " + std::to_string(n);
    return s + (extra.empty() ? "" : ", " + extra) + ")";
  }
};
const Launch kScaleAdd{};

/// The exact y[i] (in double, from the float inputs) and its tolerance: a*x + y in float is at most
/// two roundings (the product and the sum; one when fused) of |a x| + |y|: gamma_2 of it.
double exact_y(const Problem& p, std::size_t i) { return static_cast<double>(p.a) * p.x[i] + p.y[i]; }
double tolerance(const Problem& p, std::size_t i) {
  return p.exact ? 0.0 : gamma_bound(2) * (std::fabs(static_cast<double>(p.a) * p.x[i]) + std::fabs(p.y[i]));
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// How often the running check has said something: a check of many sizes describes its first
/// wrong calls in full and gives each hint once, so that the lesson's pointer is not buried.
struct Said {
  std::string check;
  int wrong_calls = 0;
  std::set<std::string> hints;
};
Said& said() {
  static Said s;
  if (s.check != current_check()) s = Said{current_check(), 0, {}};
  return s;
}
/// `text` ("\n  hint: ..."), the first time the running check gives it; else nothing.
std::string once(const std::string& text) { return said().hints.insert(text).second ? text : ""; }

/// What the wrong elements of y look like: the usual beginner's mistakes, named.
struct Diagnosis {
  std::size_t unwritten = 0, first_unwritten = 0, last_unwritten = 0;
  std::size_t dropped_y = 0, first_dropped = 0;
  std::size_t swapped = 0, first_swapped = 0;
  std::size_t repeated = 0, first_repeated = 0;
  long long times = 0;
};

Diagnosis diagnose(const std::vector<float>& got, const Problem& p) {
  Diagnosis d;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double want = exact_y(p, i), tol = tolerance(p, i), g = got[i];
    if (std::isfinite(g) && std::fabs(g - want) <= tol) continue;
    const double ax = static_cast<double>(p.a) * p.x[i];
    const double slack = gamma_bound(2) * (std::fabs(ax) + std::fabs(p.y[i])) + 1e-30;
    if (same_bits(got[i], p.y[i])) {
      if (d.unwritten++ == 0) d.first_unwritten = i;
      d.last_unwritten = i;
    } else if (std::fabs(g - ax) <= slack || std::fabs(g - 2 * ax) <= 2 * slack) {
      // a*x without the old y (y treated as an output only), or 2 a*x (y overwritten with a*x,
      // then that added to itself as if it were the old y)
      if (d.dropped_y++ == 0) d.first_dropped = i;
    } else if (std::fabs(g - (static_cast<double>(p.a) * p.y[i] + p.x[i])) <= slack * 2 + 1e-6) {
      if (d.swapped++ == 0) d.first_swapped = i;
    } else if (ax != 0 && std::isfinite(g)) {
      // a*x added k times: several threads did the read-add-write of the same element.
      const double k = std::round((g - p.y[i]) / ax);
      if (k >= 2 && k <= 4096 && std::fabs(g - (p.y[i] + k * ax)) <= (k + 1) * slack) {
        if (d.repeated++ == 0) d.first_repeated = i, d.times = static_cast<long long>(k);
      }
    }
  }
  return d;
}

/// The lesson's explanation of a diagnosis, for the function that was called.
std::string explain(const Diagnosis& d, const Problem& p, const Launch& l) {
  std::ostringstream os;
  const std::size_t n = p.x.size();
  if (d.unwritten) {
    const bool one = d.unwritten == 1;
    os << "\n  " << d.unwritten << " of " << n << " elements " << (one ? "was" : "were") << " never written ("
       << (one ? "it still holds" : "they still hold") << " y's value from before the call): y[" << d.first_unwritten << "]";
    if (!one) os << " ... y[" << d.last_unwritten << "]";
    const bool tail = d.last_unwritten == n - 1 && d.last_unwritten - d.first_unwritten + 1 == d.unwritten;
    if (tail && d.first_unwritten > 0)
      os << ", " << (one ? "the last element" : "the last " + std::to_string(d.unwritten) + " elements") << ": only the first "
         << d.first_unwritten << " were covered";
    if (l.grid_stride()) {
      const long long grid = static_cast<long long>(l.blocks) * l.threads;
      os << "\n  the caller's grid has " << l.blocks << " x " << l.threads << " = " << grid << " threads for " << n
         << " elements: each thread must go on to i + " << grid << ", i + " << 2 * grid << ", ... while i < n"
         << once("\n  hint: step by the whole grid, blockDim.x * gridDim.x (lesson, section 5 \"Grid-stride loops\")");
    } else {
      os << once("\n  hint: launch enough blocks to cover all n elements, rounding up: (n + threads - 1) / threads blocks,"
                 " and take each thread's index from blockIdx.x as well as threadIdx.x (lesson, sections 1 and 4)");
    }
  }
  if (d.dropped_y)
    os << "\n  " << d.dropped_y << " element(s) hold a multiple of a*x[i] and nothing of the old y[i], e.g. y["
       << d.first_dropped << "]: the old y[i] was never read, or was overwritten before it was read"
       << once("\n  hint: y is an input as well as the output: read y[i] before you store to it, y[i] = a * x[i] + y[i]"
               " (lesson, section 8 \"The task\")");
  if (d.swapped)
    os << "\n  " << d.swapped << " element(s) hold a*y[i] + x[i], e.g. y[" << d.first_swapped
       << "]" << once("\n  hint: a scales x, not y: y[i] = a * x[i] + y[i]");
  if (d.repeated)
    os << "\n  " << d.repeated << " element(s) got a*x[i] added more than once (y[" << d.first_repeated << "]: "
       << d.times << " times): several threads updated the same element"
       << once(std::string("\n  hint: every element must belong to exactly one thread. An index from threadIdx.x alone"
                           " repeats in every block") +
               (l.grid_stride() ? "; a stride shorter than blockDim.x * gridDim.x makes the threads' elements overlap" : "") +
               " (lesson, sections 1 and 5)");
  return os.str();
}

/// Compares y after the call with the double-precision reference; fails the running check with
/// the first wrong element and the diagnosis. Returns max |error| / tolerance.
double judge_y(const std::vector<float>& got, const Problem& p, const Launch& l, const std::string& when = "") {
  const std::size_t n = p.x.size();
  std::vector<double> ref(n), tol(n);
  for (std::size_t i = 0; i < n; ++i) ref[i] = exact_y(p, i), tol[i] = tolerance(p, i);
  const std::string call = l.name(p.n(), when);
  const Comparison c = compare_all(got, ref, tol, [&](std::size_t i) { return "y[" + std::to_string(i) + "] of " + call; });
  if (!c.ok) {
    // The first three wrong calls of a check in full, the others in a line each.
    if (++said().wrong_calls <= 3)
      ADD_FAILURE() << c.bad << " of " << n << " elements of y are wrong; first: " << c.first_message
                    << (p.exact ? once("\n  (integer inputs: a*x + y is exact in float, so any difference is a mistake)") : "")
                    << explain(diagnose(got, p), p, l);
    else
      ADD_FAILURE() << "and " << call << ": " << c.bad << " of " << n << " elements of y wrong";
  }
  return c.worst_ratio;
}

/// The contract of scale_add_grid_stride: its launch has exactly the caller's grid (every launch
/// of the call is held to it). Judged from the emulator's record of the call's launches (a traced
/// build; an untraced one cannot see them); on GPU back-ends the grade's emulator run at the
/// other warp size checks it.
void judge_grid(const kit::Call& call, const Launch& l) {
  if (!l.grid_stride() || !call.evidence().available) return;
  for (const auto& s : call.evidence().launch_shapes)
    if (s.blocks != l.blocks || s.threads_per_block != l.threads) {
      ADD_FAILURE() << call.what() << " launched " << s.blocks << " block(s) of " << s.threads_per_block
                    << " threads; the contract asks for exactly the caller's grid, " << l.blocks << " block(s) of "
                    << l.threads << " threads"
                    << once("\n  hint: launch with the function's own `blocks` and `threads` arguments and let a"
                            " grid-stride loop cover n, however small or large the grid is (lesson, section 5)");
      return;
    }
}

/// One call of the function `l` names on problem p. Returns y after the call (empty when the
/// call failed: already reported). `check_grid`: the correctness checks judge the launch's shape
/// (judge_grid); the sanitizer and performance checks leave that to them.
std::vector<float> run_call(kit::Call& call, const Problem& p, const Launch& l, bool check_grid = true) {
  const int n = p.n();
  const float a = p.a;
  const float* d_x = call.input(p.x, "x");
  float* d_y = call.output<float>(p.y.size(), "y", &p.y);
  const bool ran = call.run([&] {
    if (l.grid_stride()) scale_add_grid_stride(n, a, d_x, d_y, l.blocks, l.threads);
    else scale_add(n, a, d_x, d_y);
  });
  if (!ran) return {};
  if (check_grid) judge_grid(call, l);
  return call.result(d_y);
}

/// A checked call on fresh inputs of n elements; returns max |error| / tolerance.
double check_call(int n, const Launch& l, Values kind = Values::real) {
  const Problem p = make_problem(n, kind);
  kit::Call call(l.name(n));
  const std::vector<float> got = run_call(call, p, l);
  return got.empty() ? INFINITY : judge_y(got, p, l);
}

void check_sizes(const std::vector<int>& sizes, Values kind = Values::real) {
  double worst = 0;
  for (int n : sizes) worst = std::max(worst, check_call(n, kScaleAdd, kind));
  record(worst, 1.0, "error/tolerance");
}

struct GridCase {
  int n, blocks, threads;
};

void check_grids(const std::vector<GridCase>& cases, Values kind = Values::real) {
  double worst = 0;
  for (const GridCase& g : cases) worst = std::max(worst, check_call(g.n, Launch{g.blocks, g.threads}, kind));
  record(worst, 1.0, "error/tolerance");
}

int random_size(int lo, int hi) {
  auto gen = rng();
  return std::uniform_int_distribution<int>(lo, hi)(gen);
}

}  // namespace

// scale_add: the code chooses its grid; n is rarely a multiple of its block size.
TEST(correctness, tiny_sizes) { check_sizes({1, 2, 3, 5, 7, 31, 32, 33}); }

TEST(correctness, block_size_boundaries) {
  check_sizes({63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 513, 1023, 1024, 1025});
}

TEST(correctness, prime_and_large_sizes) { check_sizes({4099, 65537, random_size(100000, 300000), (1 << 20) + 3}); }

TEST(correctness, exact_on_integer_inputs) {
  // Exact in float whatever the order or fusing: a skipped, dropped or repeated element shows.
  double worst = check_call(777, kScaleAdd, Values::integer);
  worst = std::max(worst, check_call(random_size(2000, 5000), kScaleAdd, Values::integer));
  worst = std::max(worst, check_call(10007, Launch{5, 64}, Values::integer));
  record(worst, 1.0, "error/tolerance");
}

// scale_add_grid_stride with fewer threads than elements: each thread handles several.
TEST(correctness, grid_stride_small_grids) {
  check_grids({{1, 1, 32}, {1000, 1, 32}, {4099, 3, 64}, {65537, 7, 96}, {random_size(100000, 200000), 13, 256}});
}

// ... and with as many or more threads than elements: the extra threads must do nothing.
TEST(correctness, grid_stride_large_grids) { check_grids({{1, 4, 256}, {257, 2, 1024}, {1000, 65, 32}, {1024, 4, 256}}); }

TEST(correctness, interleaved_calls) {
  // Each function on data sets A, B, A again through the same device buffers
  // (kit::check_interleaved_calls): a result kept from an earlier call is the wrong set's.
  const int n = random_size(2000, 4000);
  auto sets = std::make_shared<std::vector<Problem>>();
  sets->push_back(make_problem(n, Values::real));
  sets->push_back(make_problem(n, Values::integer));
  auto step = [sets, n](const Launch& l) {
    return [sets, n, l](int set, kit::Slots& slots) {
      const Problem& p = (*sets)[static_cast<std::size_t>(set)];
      kit::Call call(l.name(n, kit::data_set_name(set)), slots);
      const std::vector<float> got = run_call(call, p, l);
      return !got.empty() && judge_y(got, p, l, kit::data_set_name(set)) <= 1;
    };
  };
  kit::check_interleaved_calls({{"scale_add", step(kScaleAdd)}, {"scale_add_grid_stride", step(Launch{6, 128})}});
}

// Every back-end: the emulator's findings, or on a GPU those of its sanitizer. No guard zone here,
// so that a store past y[n-1] leaves the allocation and the sanitizer names its line.
TEST(sanitizer, no_memory_errors_or_races) {
  std::vector<std::unique_ptr<kit::Call>> calls;
  auto one = [&](int n, const Launch& l) {
    calls.push_back(std::make_unique<kit::Call>(l.name(n), false));
    run_call(*calls.back(), make_problem(n, Values::real), l, false);
  };
  for (int n : {1, 257, random_size(1000, 3000)}) one(n, kScaleAdd);
  for (const GridCase& g : {GridCase{1, 1, 32}, GridCase{1000, 3, 64}, GridCase{300, 4, 128}}) one(g.n, Launch{g.blocks, g.threads});
  std::vector<const kit::Call*> all;
  for (const auto& c : calls) all.push_back(c.get());
  kit::judge_findings(all);
}

#if defined(GPULAB_BUILD_BACKEND_EMU)

namespace {

/// The load efficiency of one call: x and y read once each (2 n floats, in 32-byte sectors) over
/// the sectors the kernels' global loads moved. One thread doing everything, or threads taking
/// chunks, use 4 bytes of every sector; neighbouring threads on neighbouring elements use all 32.
void judge_load_efficiency(const Launch& l, const std::string& hint) {
  const Rubric& r = rubric();
  const int n = static_cast<int>(r.number("performance.emu", "size"));
  const double min_eff = r.number("performance.emu", "min_load_efficiency");
  const Problem p = make_problem(n, Values::real);
  kit::Call call(l.name(n, "measured"));
  const std::vector<float> got = run_call(call, p, l, false);
  if (got.empty()) return;
  // The measured run's results are checked too: fast at this size and wrong is no pass.
  if (defence_enabled("timed-outputs") && !(judge_y(got, p, l, "measured run") <= 1)) return;
  const kit::Evidence& e = call.evidence();
  if (!e.available) return not_measured("this emulator build has no memory-access tracing (build the emu preset with clang++)");
  kit::report_metrics(call);
  if (e.load_sectors == 0) {
    ADD_FAILURE() << "no kernel read global memory at n = " << n << ": y was not computed by kernels";
    return;
  }
  const double least = 2 * std::ceil(4.0 * n / 32.0);
  const double eff = std::min(1.0, least / static_cast<double>(e.load_sectors));
  std::ostringstream os;
  os.precision(3);
  os << "the kernels' global loads moved " << e.load_sectors << " sectors of 32 bytes to read x and y (" << n
     << " floats each), which fit in " << static_cast<long long>(least) << ": " << 100 * eff << "% of the bytes moved are used";
  if (const kit::MetricRow* hot = kit::hottest_global_load(call)) {
    const double bytes_per_request = hot->requests ? static_cast<double>(hot->bytes_requested) / hot->requests : 0;
    os << "\n" << hot->where << ": " << hot->requests << " warp-wide requests of " << kit::num(bytes_per_request)
       << " bytes each (a full warp of 32 threads asks for 128), " << kit::num(hot->per_request())
       << " sector(s) per request (ideal " << kit::num(hot->ideal_per_request()) << ")";
    if (bytes_per_request < 8)
      os << ": one thread per warp is loading, the others wait or have returned";
    else if (hot->lane_stride > 4)
      os << "; neighbouring threads read addresses " << hot->lane_stride << " bytes apart";
  }
  Measured(eff, min_eff, "load efficiency").suggest("min_load_efficiency", 0.8).judge(os.str(), "\n  hint: " + hint);
}

}  // namespace

TEST(performance, coalesced_global_loads) {
  judge_load_efficiency(kScaleAdd,
                        "give each thread one element, thread i of the grid element i, so that the 32 threads of a"
                        " warp read 32 neighbouring floats at once (lesson, sections 1 and 6; the TODO in first_kernels.cu)");
}

TEST(performance, grid_stride_coalesced_loads) {
  const Rubric& r = rubric();
  const Launch l{static_cast<int>(r.number("performance.emu", "grid_stride_blocks")),
                 static_cast<int>(r.number("performance.emu", "grid_stride_threads"))};
  judge_load_efficiency(l,
                        "every thread of the caller's grid must work, and at every trip of the loop the grid's threads"
                        " must cover one contiguous stretch: thread t starts at its global index and steps by"
                        " blockDim.x * gridDim.x (not one thread looping over everything, nor each thread walking a"
                        " chunk of its own; lesson, sections 5 and 6)");
}

#else  // GPU back-ends

namespace {

/// y = a*x + y at the GPU size, timed (kit::TimedCall: two input sets taking turns in the same
/// buffers, y restored before every run, sampled runs' y checked), against a float4 copy kernel
/// moving the same bytes in the same process: 12 n bytes per call (x and y read, y written).
void judge_bandwidth(const Launch& l, const std::string& hint) {
  const Rubric& r = rubric();
  const std::string section = backend_section("performance");
  const int n = static_cast<int>(r.number(section, "size"));
  const double min_fraction = r.number(section, "min_fraction_of_copy");
  Problem sets[2] = {make_problem(n, Values::real), make_problem(n, Values::real)};
  // The scale is an argument of the timed call, the same in every run: both sets share it.
  sets[1].a = sets[0].a;
  // A checked call on the first set first: right at this size too (defence timed-outputs).
  {
    kit::Call call(l.name(n, "timed inputs"));
    const std::vector<float> got = run_call(call, sets[0], l, false);
    if (got.empty()) return;
    if (defence_enabled("timed-outputs") && !(judge_y(got, sets[0], l, "timed inputs") <= 1)) return;
  }
  std::vector<float> want[2];
  double tol = 0;
  for (int s = 0; s < 2; ++s) {
    want[s].resize(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < want[s].size(); ++i) {
      want[s][i] = static_cast<float>(exact_y(sets[s], i));
      // The reference rounded to float, and the kernel's two roundings.
      tol = std::max(tol, tolerance(sets[s], i) + kFloatUnitRoundoff * std::fabs(exact_y(sets[s], i)));
    }
  }
  kit::TimedCall timed(l.grid_stride() ? "scale_add_grid_stride" : "scale_add", 2);
  const float* d_x = timed.rotated<float>({&sets[0].x, &sets[1].x});
  float* d_y = timed.rotated<float>({&sets[0].y, &sets[1].y});
  timed.check<float>(d_y, {&want[0], &want[1]}, tol, "y");
  const float a = sets[0].a;
  const double bytes = 12.0 * n;
  const kit::Ratio ratio = kit::measure_ratio(min_fraction, [&] {
    const Timing t = timed.time(
        [&] {
          if (l.grid_stride()) scale_add_grid_stride(n, a, d_x, d_y, l.blocks, l.threads);
          else scale_add(n, a, d_x, d_y);
        },
        kit::Work{8.0 * n, 4.0 * n, 2.0 * n});
    const double ceiling = kit::measured("copy bandwidth", [&] { return copy_bandwidth(static_cast<std::size_t>(bytes)); });
    const double bw = bytes / (t.median_ms * 1e-3);
    std::ostringstream os;
    os.precision(3);
    os << l.name(n) << ": " << bw / 1e9 << " GB/s (x and y read, y written, in " << t.median_ms << " ms) = " << bw / ceiling
       << " of the copy kernel's " << ceiling / 1e9 << " GB/s (median of " << t.samples << " runs, rse " << 100 * t.rse << "%)";
    return kit::Ratio{bw / ceiling, t.rse + 0.01, os.str()};
  });
  Measured(ratio.value, min_fraction, "of copy bandwidth")
      .suggest("min_fraction_of_copy", 0.5)
      .judge(ratio.text, "\n  below " + kit::num(min_fraction) + " of the copy bandwidth\n  hint: " + hint);
}

}  // namespace

TEST(performance, bandwidth_vs_copy) {
  judge_bandwidth(kScaleAdd, "one thread per element on a grid of (n + 255) / 256 blocks keeps every multiprocessor"
                             " busy; one thread alone, or a few blocks, cannot (lesson, sections 1 and 6)");
}

TEST(performance, grid_stride_bandwidth_vs_copy) {
  const Rubric& r = rubric();
  const std::string section = backend_section("performance");
  const Launch l{static_cast<int>(r.number(section, "grid_stride_blocks")),
                 static_cast<int>(r.number(section, "grid_stride_threads"))};
  judge_bandwidth(l, "every thread of the caller's grid must work, neighbouring threads on neighbouring elements:"
                     " start at the global index, step by blockDim.x * gridDim.x (lesson, sections 5 and 6)");
}

#endif
