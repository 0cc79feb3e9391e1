// Lab 04 checks: reduce_sum must be right for every n (correctness: a float tolerance from the
// reduction's depth on random inputs, and exactly on integer-valued inputs, where a skipped or
// doubled element shows at once), free of memory bugs and races (sanitizer), and fast: on the
// emulator by its load sectors and shared-memory wavefronts, on a GPU against the vendor library (CUB, rocPRIM) in the same run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/grade/compare.hpp"
#include "gpulab/grade/defences.hpp"
#include "gpulab/grade/harness.hpp"
#include "gpulab/grade/inputs.hpp"
#include "gpulab/grade/kit.hpp"
#include "gpulab/grade/perfmodel.hpp"
#include "gpulab/grade/timing.hpp"
#include "gpulab/host.hpp"
#include "reduce.hpp"

namespace {
using namespace gpulab;
using namespace gpulab::grade;

constexpr double u = kFloatUnitRoundoff;
// Probabilistic error analysis (Higham and Mary, SIAM J. Sci. Comput. 41(5), 2019, Theorem 2.4):
// a chain of d roundings, errors independent and of mean zero, stays within
// exp(lambda sqrt(d) u + d u^2 / (1 - u)) - 1 of the exact value, relative to sum |x_i|, with
// probability at least 1 - 2 d exp(-lambda^2 (1 - u)^2 / 2): for lambda = 8 and d = 2^21, a
// failure in 10^7 sums of a correct kernel.
constexpr double kLambda = 8.0;

/// Largest integer-valued sum that float represents exactly with every partial sum (2^24).
constexpr double kExactLimit = 16777216.0;

/// |result - sum| allowed for n elements whose absolute values sum to abs_sum (reduce.hpp).
double tolerance(long long n, double abs_sum) {
  const double d = static_cast<double>(std::min<long long>(n - 1, kMaxReductionDepth));
  if (d <= 0) return 0;  // one element: its value, exactly
  const double worst_case = gamma_bound(d);  // infinite once d u >= 1
  const double probable = std::expm1(kLambda * std::sqrt(d) * u + d * u * u / (1 - u));
  // plus the reference's own error (compensated double: a few units of 2^-53, relative)
  return std::min(worst_case, probable) * abs_sum + 4e-16 * abs_sum;
}

/// Uniform floats in [lo, hi): 24 random bits per element.
std::vector<float> random_values(long long n, double lo, double hi) {
  const std::uint64_t key = kit::fresh_key();
  std::vector<float> x(static_cast<std::size_t>(n));
  const float flo = static_cast<float>(lo), span = static_cast<float>(hi - lo);
  kit::for_chunks(n, [&](long long, long long b, long long e) {
    for (long long i = b; i < e; ++i) {
      const float v = flo + span * (static_cast<float>(kit::bits_at(key, static_cast<std::uint64_t>(i)) >> 40) * 0x1p-24f);
      x[static_cast<std::size_t>(i)] = v < static_cast<float>(hi) ? v : flo;  // rounding may reach hi
    }
  });
  return x;
}

/// Integer values >= 0 whose total stays below 2^24, so that every partial sum, in any order, is
/// exact in float: the result must equal the sum exactly. Up to 2^22 elements every value is 1..4
/// (a skipped or doubled element changes the sum); beyond, values are 0 or 1 with about 2^23 ones,
/// and the elements a kernel is most likely to get wrong are always 1: the first and last 64, and
/// the first and last of every 1024 (block and float4 boundaries).
std::vector<float> integer_values(long long n) {
  const std::uint64_t key = kit::fresh_key();
  std::vector<float> x(static_cast<std::size_t>(n));
  if (n <= (1LL << 22)) {
    for (long long i = 0; i < n; ++i)
      x[static_cast<std::size_t>(i)] = static_cast<float>(1 + (kit::bits_at(key, static_cast<std::uint64_t>(i)) >> 62));
    return x;
  }
  // P(one) = 2^23 / n, as a threshold on 64 random bits.
  const auto below = static_cast<std::uint64_t>(8388608.0 / static_cast<double>(n) * 18446744073709551616.0);
  std::vector<long long> ones(static_cast<std::size_t>(kit::chunk_count(n)));
  kit::for_chunks(n, [&](long long c, long long b, long long e) {
    long long count = 0;
    for (long long i = b; i < e; ++i) {
      const bool forced = i < 64 || i >= n - 64 || (i & 1023) == 0 || (i & 1023) == 1023;
      const bool one = forced || kit::bits_at(key, static_cast<std::uint64_t>(i)) < below;
      x[static_cast<std::size_t>(i)] = one ? 1.0f : 0.0f;
      count += one;
    }
    ones[static_cast<std::size_t>(c)] = count;
  });
  // Keep the total below 2^24: only the first 2^24 - 1 ones stay (the total is about
  // 2^23 + n/512, so this never cuts at n <= 2^28).
  long long total = 0;
  for (long long c : ones) total += c;
  if (total > static_cast<long long>(kExactLimit) - 1) {
    long long kept = 0;
    for (float& v : x)
      if (v != 0.0f && kept++ >= static_cast<long long>(kExactLimit) - 1) v = 0.0f;
  }
  return x;
}

std::string at(long long n, const char* kind) {
  return "reduce_sum(n = " + std::to_string(n) + ", " + kind + ")";
}

/// One call: uploads x, poisons *result with NaN, calls reduce_sum. Returns the result, or
/// nothing (failure already reported) when the call failed.
bool run_reduce(kit::Call& call, const std::vector<float>& x, float& out) {
  const float* d_x = call.input(x, "x");
  float* d_result = call.output<float>(1, "result");
  const int n = static_cast<int>(x.size());
  if (!call.run([&] { reduce_sum(d_x, n, d_result); })) return false;
  const std::vector<float> got = call.result(d_result);
  if (got.empty()) return false;
  out = got[0];
  return true;
}

/// Judges one result; `integer`: the inputs are integer-valued, the result must be exact. Returns
/// "" when it is right, else the message.
std::string verdict(float got, const std::vector<float>& x, bool integer, const std::string& what) {
  const kit::ExactSum e = kit::exact_sum(x);
  const double tol = integer ? 0.0 : tolerance(static_cast<long long>(x.size()), e.abs_sum);
  const double err = static_cast<double>(got) - e.sum;
  if (std::isfinite(got) && std::fabs(err) <= tol) return "";
  std::ostringstream os;
  os.precision(10);
  os << what << ": *result = " << got << ", expected " << e.sum;
  if (std::isnan(got)) {
    os << "\n  (NaN: *result was never written, or was computed from its value before the call, which is NaN:"
          " an atomicAdd onto *result reads it; zero it in a kernel first, or write it once at the end)";
  } else if (!std::isfinite(got)) {
    os << " (infinite)";
  } else if (integer) {
    os << " exactly (every element is a small integer and every partial sum is exact in float); it is "
       << (err < 0 ? "short by " : "over by ") << std::fabs(err) << " = " << 100 * std::fabs(err) / e.sum
       << "% of the sum"
       << (err < 0 ? ": elements were skipped (the tail after the last full block or float4? a grid too small?)"
                   : ": elements were counted twice (overlapping grid-stride ranges? a block added twice?)");
  } else {
    os << " (error " << std::fabs(err) << " > tolerance " << tol << " = "
       << tol / std::max(e.abs_sum, 1e-300) << " x sum|x|, for a chain of at most "
       << std::min<long long>(static_cast<long long>(x.size()) - 1, kMaxReductionDepth)
       << " additions (reduce.hpp, kMaxReductionDepth))";
  }
  return os.str();
}

/// The same, failing the running check with the message.
bool judge(float got, const std::vector<float>& x, bool integer, const std::string& what) {
  const std::string bad = verdict(got, x, integer, what);
  if (!bad.empty()) ADD_FAILURE() << bad;
  return bad.empty();
}

/// Both kinds of input at each size: uniform floats in [lo, hi) within the tolerance, and
/// integer values exactly. Records the number of wrong calls; the first few are described.
void check_sizes(const std::vector<long long>& sizes, double lo = -1.0, double hi = 1.0) {
  constexpr int kShown = 4;
  int wrong = 0, described = 0, undescribed = 0;
  std::string shown;
  auto one = [&](const std::vector<float>& x, bool integer) {
    kit::Call call(at(static_cast<long long>(x.size()), integer ? "integer values" : "random floats"));
    float got = 0;
    if (!run_reduce(call, x, got)) return ++wrong, void();  // reported by the kit
    const std::string bad = verdict(got, x, integer, call.what());
    if (bad.empty()) return;
    ++wrong;
    if (described < kShown) shown += bad + "\n", ++described;
    else ++undescribed;
  };
  for (long long n : sizes) {
    one(random_values(n, lo, hi), false);
    one(integer_values(n), true);
  }
  if (!shown.empty()) {
    ADD_FAILURE() << shown
                  << (undescribed > 0 ? "(and " + std::to_string(undescribed) + " more wrong results, not shown)" : "");
  }
  record(wrong, 0, "wrong calls");
}

long long random_size(long long lo, long long hi) {
  auto gen = rng();
  return std::uniform_int_distribution<long long>(lo, hi)(gen);
}

long long largest() { return static_cast<long long>(rubric().number(backend_section("correctness"), "largest")); }

}  // namespace

TEST(correctness, tiny_sizes) { check_sizes({1, 2, 3, 4, 5, 7, 8, 13, 31, 32, 33, 63, 64, 65, 127}); }

TEST(correctness, block_boundaries) {
  // multiples of every block size a kernel is likely to use, and one off either side
  check_sizes({255, 256, 257, 511, 513, 1023, 1024, 1025, 2047, 4095, 4096, 4097, 8193});
}

TEST(correctness, primes_and_random_sizes) {
  check_sizes({10007, 65521, 131071, random_size(1000, 100000), random_size(100000, 400000)});
}

TEST(correctness, positive_values_large_n) {
  // All positive: no cancellation, so the tolerance is a small fraction of the sum itself; a
  // missing block of elements or a long sequential chain that stops growing shows here.
  check_sizes({largest() / 2 + 1, largest()}, 0.0, 1.0);
}

TEST(correctness, repeated_calls) {
  // State kept between calls (a counter of finished blocks, a scratch buffer) must be ready for
  // the next call, whatever its size.
  const long long big = std::min<long long>(largest(), 300007);
  check_sizes({big, 5, 4096, big});
}

TEST(correctness, interleaved_calls) {
  // reduce_sum on arrays A (integer values, exact), B (random floats), A again, through the same
  // device buffers (kit::check_interleaved_calls): a sum kept from an earlier call is the wrong one.
  const long long n = random_size(20000, 60000);
  const std::vector<float> sets[2] = {integer_values(n), random_values(n, -1.0, 1.0)};
  kit::check_interleaved_calls({{"reduce_sum", [&](int set, kit::Slots& slots) {
                                   kit::Call call(at(n, set == 0 ? "integer values, data set A" : "random floats, data set B"),
                                                  slots);
                                   float got = 0;
                                   return run_reduce(call, sets[set], got) && judge(got, sets[set], set == 0, call.what());
                                 }}});
}

// Every back-end: the emulator's findings (out of bounds, races on shared memory, uninitialised
// shared reads), or on a GPU its sanitizer's, which the grader runs around these calls.
TEST(sanitizer, no_memory_errors_or_races) {
  std::vector<std::unique_ptr<kit::Call>> calls;
  for (long long n : {1LL, 37LL, 1000LL, 70001LL}) {
    calls.push_back(std::make_unique<kit::Call>(at(n, "random floats"), false));
    float got = 0;
    run_reduce(*calls.back(), random_values(n, -1, 1), got);
  }
  std::vector<const kit::Call*> all;
  for (const auto& c : calls) all.push_back(c.get());
  kit::judge_findings(all);
}

#if defined(GPULAB_BUILD_BACKEND_EMU)

namespace {

long long emu_size() { return static_cast<long long>(rubric().number("performance.emu", "size")); }

/// The measured call at the rubric's size: integer-valued input (checked exactly, like any other
/// call), its metrics into the report. Returns false (reported) when there is nothing to judge.
/// The four performance checks judge one call from four angles: its input is drawn once (by the
/// first of them to run, in the runner and the judge alike) and the call is shared across the
/// checks (kit::Call::share_across_checks): the emulator traces it once, and each check still
/// judges every rule of its record.
bool measured_call(kit::Call& call) {
  static const std::vector<float> x = integer_values(emu_size());
  float got = 0;
  call.share_across_checks();
  if (!run_reduce(call, x, got)) return false;
  if (defence_enabled("timed-outputs") && !judge(got, x, true, call.what())) return false;
  if (!call.evidence().available) {
    not_measured("this emulator build has no memory-access tracing (build the emu preset with clang++)");
    return false;
  }
  kit::report_metrics(call);
  return true;
}

}  // namespace

TEST(performance, coalesced_loads) {
  // All global loads of the call against the least they need: x once, in 32-byte sectors.
  const double min_eff = rubric().number("performance.emu", "min_load_efficiency");
  const long long n = emu_size();
  kit::Call call(at(n, "measured"));
  if (!measured_call(call)) return;
  const kit::Evidence& e = call.evidence();
  const double least = std::ceil(4.0 * static_cast<double>(n) / 32.0);
  const double eff = e.load_sectors ? std::min(1.0, least / static_cast<double>(e.load_sectors)) : 0.0;
  std::ostringstream os;
  os.precision(3);
  os << at(n, "measured") << ": global loads moved " << e.load_sectors << " sectors of 32 bytes where "
     << static_cast<long long>(least) << " would do: " << 100 * eff << "% of the bytes moved are used";
  if (const kit::MetricRow* m = kit::hottest_global_load(call))
    os << "\n" << m->where << ": " << m->per_request() << " sectors per load request (ideal " << m->ideal_per_request()
       << "); neighbouring lanes read addresses " << m->lane_stride << " bytes apart";
  Measured(eff, min_eff, "of the bytes loaded are used")
      .suggest("min_load_efficiency", 0.8)
      .judge(os.str(),
             "\n  hint: in each step of a loop, neighbouring threads must read neighbouring elements:"
             " thread t reads x[t], x[t + stride], ... (a grid-stride loop), not a chunk of its own"
             " (README, \"Many elements per thread\")");
}

TEST(performance, shared_memory_work) {
  // The work of combining: shared-memory wavefronts (each shared load or store request of a warp
  // costs at least one) per 1024 elements. A tree per 256 elements pays hundreds; warp shuffles
  // and a grid-stride loop leave a few per block.
  const double max_wavefronts = rubric().number("performance.emu", "max_shared_wavefronts_per_1024");
  const long long n = emu_size();
  kit::Call call(at(n, "measured"));
  if (!measured_call(call)) return;
  long long wavefronts = 0, shared_requests = 0, atomics = 0;
  const kit::MetricRow* worst = nullptr;
  for (const auto& m : call.metrics()) {
    if (m.atomic) {
      atomics += m.requests;
      continue;
    }
    if (!m.shared) continue;
    wavefronts += m.units;
    shared_requests += m.requests;
    if (!worst || m.units > worst->units) worst = &m;
  }
  auto per_k = [n](long long count) { return 1024.0 * static_cast<double>(count) / static_cast<double>(n); };
  const double per_1024 = per_k(wavefronts);
  std::ostringstream os;
  os.precision(3);
  os << at(n, "measured") << ": " << wavefronts << " shared-memory wavefronts (" << shared_requests
     << " requests) = " << per_1024 << " per 1024 elements; " << atomics << " atomic requests; "
     << call.evidence().launches << " kernel launch(es); " << call.evidence().barriers << " barriers and "
     << call.evidence().shuffles << " warp shuffles (" << per_k(call.evidence().barriers) << " and "
     << per_k(call.evidence().shuffles) << " per 1024 elements)";
  if (worst)
    os << "\n" << worst->where << ": the busiest shared " << (worst->store ? "store" : "load") << ", "
       << worst->units << " wavefronts (" << worst->per_request() << " per request)";
  info("shared_wavefronts_per_1024", std::to_string(per_1024));
  info("atomic_requests", std::to_string(atomics));
  info("launches", std::to_string(call.evidence().launches));
  info("barriers", std::to_string(call.evidence().barriers));
  info("shuffles", std::to_string(call.evidence().shuffles));
  Measured(per_1024, max_wavefronts, "shared wavefronts per 1024 elements")
      .suggest("max_shared_wavefronts_per_1024", 2.0)
      .at_most()
      .judge(os.str(), "\n  more than " + kit::num(max_wavefronts) +
                           " per 1024 elements. hint: give each thread many elements (a grid-stride loop over a fixed"
                           " number of blocks), and reduce inside a warp with __shfl_down_sync (offsets from warpSize / 2)"
                           " instead of a shared-memory tree (README, \"Many elements per thread\" and \"Warp shuffles\")");
}

TEST(performance, spreads_over_the_gpu) {
  // A memory-bound sum needs every multiprocessor reading: the launch that moves most of the
  // call's bytes must have at least one block per SM of the modelled GPU (an H200: 132). The
  // emulator's per-request metrics cannot see this; a single block of 1024 threads passes them
  // and runs at 0.003 of CUB on the H200 (docs/results/verdict-agreement.md).
  const double min_blocks = rubric().number("performance.emu", "min_blocks_busiest_launch");
  const long long n = emu_size();
  kit::Call call(at(n, "measured"));
  if (!measured_call(call)) return;
  const auto& shapes = call.evidence().launch_shapes;
  long long total = 0;
  const kit::Evidence::Launch* busiest = kit::busiest_launch(call, total);
  if (!busiest) {
    not_measured("the emulator recorded no launch shapes for the call");
    return;
  }
  std::ostringstream os;
  os.precision(3);
  os << at(n, "measured") << ": " << shapes.size() << " launch(es); the one that moves the most global sectors ("
     << busiest->sectors << " of " << total << ") has " << busiest->blocks << " block(s) of " << busiest->threads_per_block
     << " threads";
  info("busiest_launch_blocks", std::to_string(busiest->blocks));
  Measured(static_cast<double>(busiest->blocks), min_blocks, "blocks in the busiest launch")
      .judge(os.str(), ": at most " + std::to_string(busiest->blocks) + " of an H200's 132 multiprocessors work on it (at least " +
                           kit::num(min_blocks) + " blocks expected)\n  hint: launch enough blocks to fill the GPU (a few per SM) and let"
                           " each thread loop over many elements (README, \"Step 3: many elements per thread\", How many blocks?)");
}

TEST(performance, predicted_fraction_of_vendor) {
  // A sum over 2^28 floats is a stream from DRAM: its speed is the bytes its threads keep in
  // flight (Little's law). On an H200 one 4-byte load per thread and loop trip reads at 0.58 of
  // the best bandwidth even with every SM full, where four float4 loads read at 1.0
  // (docs/results/perfmodel/probes/inflight.cu). The bytes per trip come from nvcc's PTX of the hand-in
  // (the loops as the GPU runs them, unrolled or not), the threads per SM from the busiest
  // launch's grid and the kernels' registers; the predicted read bandwidth over CUB's, measured on
  // the H200, must reach the GPU grade's threshold.
  const double min_fraction = rubric().number("performance.emu", "min_predicted_fraction_of_vendor");
  const double vendor = rubric().number("performance.emu", "vendor_read_bytes_per_s");
  const std::string model_name = rubric().text("performance.emu", "model").value_or("");
  const long long n = emu_size();
  kit::Call call(at(n, "measured"));
  if (!measured_call(call)) return;
  const kit::ReadPrediction read = kit::predict_read_bandwidth(call, model_name);
  if (!read.available) {
    if (read.refused && kit::refuse_unpredicted(call.what(), read.why)) return;
    note("no speed prediction (" + read.why + "): the bytes in flight are not graded on this machine");
    return;
  }
  const double bandwidth = read.bytes_per_s;
  if (const perfmodel::Gpu* gpu = perfmodel::gpu(model_name); gpu && kit::refuse_implausible(call.what(), *gpu, 0, bandwidth))
    return;
  const double fraction = bandwidth / vendor;
  std::ostringstream os;
  os.precision(3);
  os << read.text << ", " << fraction << " of CUB's measured " << vendor / 1e9 << " GB/s";
  info("predicted_read_gbps", std::to_string(bandwidth / 1e9));
  Measured(fraction, min_fraction, "of CUB's read bandwidth, predicted for an H200")
      .judge(os.str(), " (at least " + kit::num(min_fraction) +
                           " expected, as on the GPU)\n  hint: give each thread more bytes in flight per loop trip: load a"
                           " float4, or several independent elements before adding them (README, \"Many elements per"
                           " thread\")");
}

#elif defined(GPULAB_LAB04_VENDOR_BASELINE)

/// The grader's baseline on the same input: cub::DeviceReduce::Sum (cub_baseline.cu, cuda) or
/// rocprim::reduce (rocprim_baseline.cu, rocm).
void lab04_vendor_sum(const float* x, int n, float* result);
const char* lab04_vendor_name();

namespace {

/// A checked call on one input set of the timed runs, judged exactly, and the exact sum (integer
/// values: a float): what every timed run on that set must give. Empty when the call failed (reported).
std::vector<float> checked_sum(const std::vector<float>& x, long long n, const char* set) {
  kit::Call call(at(n, "timed inputs") + ", " + set);
  float got = 0;
  if (!run_reduce(call, x, got)) return {};
  if (defence_enabled("timed-outputs")) judge(got, x, true, call.what() + ", timed run");
  return {static_cast<float>(kit::exact_sum(x).sum)};
}

/// Time of the vendor library / time of reduce_sum at n, on integer-valued inputs: two sets of
/// different sums taking turns in one buffer (kit::TimedCall), each checked exactly first.
kit::Ratio measure_vs_vendor(long long n, double threshold) {
  const std::string key = "n" + std::to_string(n);
  const std::vector<float> a = integer_values(n);
  std::vector<float> b(a.rbegin(), a.rend());  // the same values reversed: another order in memory,
  b[0] = b[0] == 1.0f ? 2.0f : 1.0f;           // and another sum, so that a kept sum is seen
  const std::vector<float> sum_a = checked_sum(a, n, "set 1"), sum_b = checked_sum(b, n, "set 2");
  if (sum_a.empty() || sum_b.empty()) return {};
  kit::TimedCall timed("reduce_sum_" + key, 2);
  const float* x = timed.rotated<float>({&a, &b});
  float* out = timed.output<float>(1);
  timed.check<float>(out, {&sum_a, &sum_b}, 0.0, "*result");
  kit::DeviceData data;
  const float* da = data.upload(a);
  const float* db = data.upload(b);
  float* out_vendor = data.scratch<float>(1);
  Timing mine, vendor;
  kit::Ratio r = kit::measure_ratio(threshold, [&] {
    mine = timed.time([&] { reduce_sum(x, static_cast<int>(n), out); }, kit::Work{4.0 * static_cast<double>(n), 4, static_cast<double>(n)});
    vendor = kit::time("vendor_" + key, [&](int i) { lab04_vendor_sum(i % 2 ? db : da, static_cast<int>(n), out_vendor); });
    return kit::Ratio{vendor.median_ms / mine.median_ms, mine.rse + vendor.rse + 0.01, ""};
  });
  std::ostringstream os;
  os.precision(3);
  const double gbps = 4.0 * static_cast<double>(n) / (mine.median_ms * 1e-3) / 1e9;
  os << "n = " << n << ": " << mine.median_ms * 1e3 << " us (" << gbps << " GB/s) vs " << lab04_vendor_name() << ": "
     << vendor.median_ms * 1e3 << " us: " << r.value << " of the vendor library's speed (medians of " << mine.samples
     << " and " << vendor.samples << " runs"
     << (r.remeasured ? ", measured twice: the first was within noise of the threshold" : "") << ")";
  if (n >= (1LL << 24)) {
    // Context, not graded: both reads against a float4 copy kernel's bandwidth (bytes read and
    // written) over as many bytes, measured in the same run (the lesson quotes it for CUB).
    const double copy = kit::measured("copy bandwidth " + key, [&] { return copy_bandwidth(8 * static_cast<std::size_t>(n)); });
    const double vendor_gbps = 4.0 * static_cast<double>(n) / (vendor.median_ms * 1e-3) / 1e9;
    os << "; reads at " << gbps * 1e9 / copy << " (yours) and " << vendor_gbps * 1e9 / copy << " (vendor) of the copy kernel's "
       << copy / 1e9 << " GB/s";
    info("copy_" + key + "_gbps", std::to_string(copy / 1e9));
  }
  info("reduce_sum_" + key + "_us", std::to_string(mine.median_ms * 1e3));
  info("vendor_" + key + "_us", std::to_string(vendor.median_ms * 1e3));
  r.text = os.str();
  return r;
}

}  // namespace

TEST(performance, speed_vs_vendor) {
  const std::string section = backend_section("performance");
  const std::vector<double> sizes = rubric().numbers(section, "sizes");
  const std::vector<double> mins = rubric().numbers(section, "min_fraction_of_vendor");
  double worst_margin = INFINITY, worst_value = 0, worst_threshold = 0;
  std::string report;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const double threshold = mins.at(std::min(k, mins.size() - 1));
    const kit::Ratio r = measure_vs_vendor(static_cast<long long>(sizes[k]), threshold);
    report += r.text + (r.value < threshold ? "  <- below " + std::to_string(threshold) : "") + "\n";
    if (r.value / threshold < worst_margin) {
      worst_margin = r.value / threshold;
      worst_value = r.value;
      worst_threshold = threshold;
    }
  }
  // One key per size would not match the rubric's list: the worst ratio, against its own threshold.
  // (fails exactly when a size is below its threshold: the worst ratio is then below its own)
  Measured(worst_value, worst_threshold, "of the vendor library's speed (the size furthest below its threshold)")
      .suggest("min_fraction_of_vendor", 0.8)
      .judge(report,
             "hint: at 2^28 the sum is bound by DRAM bandwidth: enough loads in flight (a grid-stride loop,"
             " float4, several loads per iteration); at 2^16 by latency: spread the work over many blocks of"
             " short-lived threads (one block, or a few threads each summing a long chunk, cannot hide it),"
             " and combine the blocks without a second pass (labs/04-reductions/README.md)");
}

#else  // a GPU back-end without the vendor library

TEST(performance, speed_vs_vendor) {
  not_measured("the vendor baseline was not built: rocPRIM's headers were not found when the rocm build was configured"
               " (install librocprim-dev or ROCm's rocprim, then configure again)");
}

#endif
