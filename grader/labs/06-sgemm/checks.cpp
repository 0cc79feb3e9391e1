// Lab 06 checks: C = alpha A B + beta C must be right for every size (correctness), free of
// memory bugs and races (sanitizer, emulator), and fast: a fraction of the vendor library's speed
// on a GPU, or on the emulator that fraction as a performance model predicts it for an H200 from
// what the emulator counted (performance).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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
#include "sgemm.hpp"
#include "vendor_blas.hpp"

namespace {
using namespace gpulab;
using namespace gpulab::grade;

struct Problem {
  int M, N, K;
  float alpha, beta;
};

std::string describe(const Problem& p) {
  std::ostringstream os;
  os << p.M << " x " << p.N << " x " << p.K << " (alpha " << p.alpha << ", beta " << p.beta << ")";
  return os.str();
}

std::vector<float> random_values(std::size_t n, std::mt19937_64& gen) {
  kit::UniformReal<float> d{-1.0f, 1.0f};
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

/// The reference of C = alpha A B + beta C0 in double, and the tolerance of each element:
/// |C - ref| <= gamma_{K+2} (|alpha| sum_k |A_ik B_kj| + |beta C_ij|), the bound for a K-term dot
/// product plus the scaling (Higham, section 3.1).
void reference(const Problem& p, const std::vector<float>& a, const std::vector<float>& b,
               const std::vector<float>& c0, std::vector<double>& ref, std::vector<double>& tol) {
  const std::size_t mn = 1ull * p.M * p.N;
  ref.assign(mn, 0);
  tol.assign(mn, 0);
  const double g = gamma_bound(p.K + 2);
  for (int i = 0; i < p.M; ++i)
    for (int j = 0; j < p.N; ++j) {
      double s = 0, abs_sum = 0;
      for (int k = 0; k < p.K; ++k) {
        const double prod = static_cast<double>(a[1ull * i * p.K + k]) * b[1ull * k * p.N + j];
        s += prod;
        abs_sum += std::fabs(prod);
      }
      const std::size_t ij = 1ull * i * p.N + j;
      const double old = p.beta == 0 ? 0.0 : static_cast<double>(c0[ij]);
      ref[ij] = p.alpha * s + p.beta * old;
      tol[ij] = g * (std::fabs(p.alpha) * abs_sum + std::fabs(p.beta * old)) + 1e-30;
    }
}

/// What C holds before a call with beta == 0, where C is output only.
enum class Poison {
  // A finite value far from any result (|alpha A B| <= 2 K <= 800 here): a kernel that computes
  // beta * C anyway gets 0 * C = 0, so only beta_zero_does_not_read_c judges that contract detail,
  // and an element that still holds it was not written.
  finite,
  // NaN: any read of C, even multiplied by 0, shows in the result (beta_zero_does_not_read_c).
  nan,
};
constexpr float kUnwrittenC = -1.0e30f;
constexpr const char* kUnwrittenText = "-1e30";

bool is_unwritten(float x) {
  std::uint32_t a, b;
  std::memcpy(&a, &x, sizeof a);
  std::memcpy(&b, &kUnwrittenC, sizeof b);
  return a == b;
}

std::string element_of(const Problem& p, std::size_t ij) {
  return "C[" + std::to_string(ij / p.N) + "][" + std::to_string(ij % p.N) + "] of " + describe(p);
}

/// Compares C with the double-precision reference: elements left at kUnwrittenC are reported as
/// not written, the others as wrong. Returns max error / tolerance.
double compare_c(const Problem& p, const std::vector<float>& got, const std::vector<double>& ref,
                 const std::vector<double>& tol, Poison poison) {
  const std::size_t mn = ref.size();
  std::vector<std::size_t> written;
  std::size_t unwritten = 0, first_unwritten = 0;
  written.reserve(mn);
  for (std::size_t ij = 0; ij < mn; ++ij) {
    if (p.beta == 0 && poison == Poison::finite && is_unwritten(got[ij])) {
      if (unwritten++ == 0) first_unwritten = ij;
    } else {
      written.push_back(ij);
    }
  }
  if (unwritten)
    ADD_FAILURE() << unwritten << " of " << mn << " elements of C were not written; first: "
                  << element_of(p, first_unwritten) << " still holds " << kUnwrittenText
                  << ", the value C held before the call (beta == 0: C is output only)"
                  << "\n  hint: every element of C must be stored, also in the partial tiles at the right and bottom"
                     " edges when M or N is not a multiple of the tile size";
  std::vector<float> got_w(written.size());
  std::vector<double> ref_w(written.size()), tol_w(written.size());
  for (std::size_t k = 0; k < written.size(); ++k) {
    got_w[k] = got[written[k]];
    ref_w[k] = ref[written[k]];
    tol_w[k] = tol[written[k]];
  }
  const Comparison c = compare_all(got_w, ref_w, tol_w, [&](std::size_t k) { return element_of(p, written[k]); });
  if (!c.ok)
    ADD_FAILURE() << c.bad << " of " << mn << " elements are wrong; first: " << c.first_message
                  << (poison == Poison::nan && c.first_message.find("NaN") != std::string::npos
                          ? "\n  hint: C started as NaN in this check (beta == 0): the kernel read the old C, or left"
                            " elements unwritten. With beta == 0, C must not be read: 0 * NaN is NaN (the other checks"
                            " start C with a finite value, so only this one shows a read)"
                          : "");
  return unwritten ? INFINITY : c.worst_ratio;
}

/// Runs the implementation (through the lab kit) on fresh random inputs and compares every
/// element of C with the double-precision reference. With beta = 0, C starts as `poison`.
/// Returns max error / tolerance.
double check_problem(kit::Call& call, const Problem& p, std::mt19937_64& gen, bool compare = true,
                     Poison poison = Poison::finite) {
  const std::size_t mk = 1ull * p.M * p.K, kn = 1ull * p.K * p.N, mn = 1ull * p.M * p.N;
  const std::vector<float> a = random_values(mk, gen), b = random_values(kn, gen);
  const float start = poison == Poison::nan ? NAN : kUnwrittenC;
  const std::vector<float> c0 = p.beta == 0 ? std::vector<float>(mn, start) : random_values(mn, gen);
  const float* d_a = call.input(a, "A");
  const float* d_b = call.input(b, "B");
  float* d_c = call.output<float>(mn, "C", &c0);
  if (!call.run([&] { sgemm(p.M, p.N, p.K, p.alpha, d_a, d_b, p.beta, d_c); })) return INFINITY;
  if (!compare) return 0;
  std::vector<double> ref, tol;
  reference(p, a, b, c0, ref, tol);
  return compare_c(p, call.result(d_c), ref, tol, poison);
}

void check_problems(const std::vector<Problem>& problems, Poison poison = Poison::finite) {
  auto gen = rng();
  double worst = 0;
  for (const auto& p : problems) {
    kit::Call call("sgemm " + describe(p));
    worst = std::max(worst, check_problem(call, p, gen, true, poison));
  }
  record(worst, 1.0, "error/tolerance");
}

int random_in(std::mt19937_64& gen, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); }

}  // namespace

TEST(correctness, tiny_and_degenerate_sizes) {
  check_problems({{1, 1, 1, 1.0f, 0.0f}, {1, 7, 1, 2.0f, 0.0f}, {5, 1, 3, 1.0f, 0.5f}, {3, 3, 1, -1.0f, 1.0f},
                  {1, 1, 300, 1.0f, 0.0f}, {2, 3, 4, 0.5f, -2.0f}});
}

TEST(correctness, sizes_that_are_not_tile_multiples) {
  check_problems({{127, 129, 65, 1.0f, 0.0f}, {1000, 1, 300, 1.0f, 0.0f}, {1, 1000, 33, 0.75f, 0.25f},
                  {33, 65, 17, 1.5f, 0.0f}, {129, 127, 130, -1.0f, 1.0f}});
}

TEST(correctness, tile_multiples) { check_problems({{128, 128, 128, 1.0f, 0.0f}, {256, 128, 64, 1.0f, 1.0f}}); }

TEST(correctness, random_sizes_alpha_beta) {
  auto gen = rng();
  std::vector<Problem> ps;
  const int hi = std::string(backend()) == "emu" ? 150 : 400;
  for (int i = 0; i < 3; ++i) {
    kit::UniformReal<float> coef{-2.0f, 2.0f};
    ps.push_back({random_in(gen, 1, hi), random_in(gen, 1, hi), random_in(gen, 1, hi), coef(gen), i == 0 ? 0.0f : coef(gen)});
  }
  check_problems(ps);
}

TEST(correctness, beta_zero_does_not_read_c) {
  // The contract's "beta == 0: C is output only" on its own: C starts as NaN, so any read of it
  // (even multiplied by 0) poisons the result. The other checks start C with a finite value, so
  // a kernel that computes beta * C loses this check only.
  check_problems({{64, 64, 64, 1.0f, 0.0f}, {70, 90, 40, -1.0f, 0.0f}}, Poison::nan);
}

TEST(correctness, interleaved_calls) {
  // sgemm on matrices A, B, A again (one size, alpha and beta: C read and written), through the
  // same device buffers (kit::check_interleaved_calls): a product kept from an earlier call (a memo
  // by pointer, size or coefficients) is the wrong matrices'.
  auto gen = rng();
  const Problem p{random_in(gen, 40, 130), random_in(gen, 40, 130), random_in(gen, 20, 130), 1.25f, 0.5f};
  const std::mt19937_64 data[2] = {std::mt19937_64(gen()), std::mt19937_64(gen())};
  kit::check_interleaved_calls({{"sgemm", [&](int set, kit::Slots& slots) {
                                   kit::Call call("sgemm " + describe(p) + ", " + kit::data_set_name(set), slots);
                                   std::mt19937_64 same = data[set];  // the same matrices each time the set comes back
                                   return check_problem(call, p, same) <= 1;
                                 }}});
}

// Every back-end: the emulator's findings, or on a GPU those of its sanitizer, which the grader
// runs around these calls (compute-sanitizer on cuda).
TEST(sanitizer, no_memory_errors_or_races) {
  auto gen = rng();
  std::vector<std::unique_ptr<kit::Call>> calls;
  for (const Problem& p : {Problem{67, 35, 19, 1.0f, 0.5f}, Problem{128, 128, 64, 1.0f, 0.0f}}) {
    calls.push_back(std::make_unique<kit::Call>("sgemm " + describe(p), false));
    check_problem(*calls.back(), p, gen, false);
  }
  std::vector<const kit::Call*> all;
  for (const auto& c : calls) all.push_back(c.get());
  kit::judge_findings(all);
}

#if defined(GPULAB_BUILD_BACKEND_EMU)

namespace {
namespace traffic {

/// What the traffic rule sees in a measured call at n^3: global bytes per FMA and the shared
/// loads' wavefront efficiency, with the line of the worst bank conflicts.
struct Traffic {
  double bytes_per_fma = 0, shared_efficiency = 1;
  std::string worst_shared;
};

Traffic of(const kit::Call& call, int n) {
  Traffic t;
  long long shared_units = 0, shared_ideal = 0;
  const kit::MetricRow* worst = nullptr;
  for (const auto& m : call.metrics()) {
    if (m.shared && !m.store) {
      shared_units += m.units;
      shared_ideal += m.ideal_units;
      if (!worst || m.units - m.ideal_units > worst->units - worst->ideal_units) worst = &m;
    }
  }
  t.bytes_per_fma = 32.0 * static_cast<double>(call.evidence().load_sectors) / (1.0 * n * n * n);
  t.shared_efficiency = shared_units ? static_cast<double>(shared_ideal) / shared_units : 1.0;
  if (worst && worst->units > worst->ideal_units) {
    std::ostringstream os;
    os.precision(3);
    os << " (most conflicts at " << worst->where << ", " << worst->per_request() << " wavefronts per request, ideal "
       << worst->ideal_per_request() << ")";
    t.worst_shared = os.str();
  }
  return t;
}

std::string describe(const Traffic& t, int n) {
  std::ostringstream os;
  os.precision(3);
  os << "global loads move " << t.bytes_per_fma << " bytes per FMA at " << n << "^3; shared loads: "
     << 100 * t.shared_efficiency << "% wavefront efficiency" << t.worst_shared;
  return os.str();
}

}  // namespace traffic

/// The model's counts of one launch (gpulab/grade/perfmodel.hpp's names) from the kit's record.
perfmodel::Counts model_counts(const kit::Evidence::Launch& l) {
  perfmodel::Counts c;
  for (const auto& [name, v] : l.counts) c[name] = static_cast<double>(v);
  c["blocks"] = static_cast<double>(l.blocks);
  c["threads_per_block"] = static_cast<double>(l.threads_per_block);
  c["barriers_per_block"] = l.blocks ? static_cast<double>(l.count("barriers")) / l.blocks : 0;
  const long long lanes = l.count("shared_load_lanes");
  c["shared_loads_under_global_load"] = lanes ? static_cast<double>(l.count("shared_load_lanes_under_global")) / lanes : 0;
  return c;
}

/// The hint for what bounds the predicted time.
std::string model_hint(const std::string& bound) {
  if (bound == "l1" || bound == "dram")
    return "global memory bounds it: each value loaded must serve many FMAs: tile A and B in shared memory and compute"
           " a block of C per thread in registers (steps 3-5 of the README)";
  if (bound == "shared")
    return "shared memory bounds it: more FMAs per shared load (a larger register tile per thread, float4 loads of"
           " the tiles) and no bank conflicts (transpose the A tile; steps 5-7 of the README)";
  if (bound == "latency")
    return "waiting on global loads bounds it: too few resident blocks hide the L2's latency: fewer registers or"
           " less shared memory per block, or load the next tile while computing this one (step 8 of the README)";
  if (bound == "issue")
    return "instruction issue bounds it: fewer instructions per FMA (wider loads, a larger register tile, index"
           " arithmetic out of the inner loop; steps 6 and 9 of the README)";
  if (bound == "occupancy")
    return "not one block fits on a multiprocessor: fewer threads, registers or shared memory per block";
  return "follow the steps of labs/06-sgemm/README.md";
}

/// The grade without a speed prediction (`why` says why there is none): at most the rubric's
/// global bytes per FMA, and at least its wavefront efficiency of the shared loads.
void grade_by_traffic(const traffic::Traffic& t, int n, const std::string& why) {
  const Rubric& r = rubric();
  const double max_bytes = r.number("performance.emu", "max_global_bytes_per_fma");
  const double min_shared = r.number("performance.emu", "min_shared_load_efficiency");
  std::ostringstream os;
  os << "no speed prediction (" << why << "); graded by memory traffic instead: " << traffic::describe(t, n)
     << " (thresholds " << max_bytes << " bytes per FMA, " << 100 * min_shared << "% efficiency)";
  Measured(t.bytes_per_fma, max_bytes, "global bytes per FMA")
      .at_most()
      .fails_if(t.shared_efficiency < min_shared)
      .judge(os.str(), "\n  hint: " + model_hint(t.bytes_per_fma > max_bytes ? "l1" : "shared"));
}

/// The performance model's prediction of the call's launches on `gpu` at the rubric's model_size^3,
/// as a fraction of the vendor library's speed there.
void grade_by_prediction(const kit::Call& call, const traffic::Traffic& t,
                         const std::vector<kit::KernelResources>& kernels, const perfmodel::Gpu& gpu, int n) {
  const Rubric& r = rubric();
  const kit::Evidence& e = call.evidence();
  // Occupancy: the most registers and static shared memory of any kernel of the file (which
  // kernel a launch ran is not recorded; a small helper kernel cannot make a big one look cheaper).
  int registers = 0;
  long long static_shared = 0;
  for (const auto& k : kernels) {
    registers = std::max(registers, k.registers);
    static_shared = std::max(static_shared, k.shared_bytes);
  }
  const int big_n = static_cast<int>(r.number("performance.emu", "model_size"));
  double seconds = 0;
  perfmodel::Prediction slowest;
  for (const auto& l : e.launch_shapes) {
    const perfmodel::Prediction p =
        perfmodel::predict_sgemm(model_counts(l), registers, static_shared + l.dynamic_shared_bytes, gpu, n, big_n);
    seconds += p.seconds;
    if (p.seconds >= slowest.seconds) slowest = p;
  }
  const double tflops = std::isfinite(seconds) && seconds > 0 ? 2.0 * big_n * big_n * big_n / seconds / 1e12 : 0;
  if (kit::refuse_implausible(call.what(), gpu, tflops * 1e12, 0)) return;
  const double vendor_tflops = r.number("performance.emu", "vendor_tflops");
  const double fraction = tflops / vendor_tflops;
  const double min_fraction = r.number("performance.emu", "min_predicted_fraction_of_vendor");
  const double optimism = r.number("performance.emu", "model_optimism");
  const double needed = min_fraction * (1 + optimism);
  info("predicted_tflops", std::to_string(tflops));
  info("predicted_bound", slowest.bound);
  std::ostringstream os;
  os.precision(3);
  os << "predicted for an NVIDIA " << gpu.name << " at " << big_n << "^3 from the counts at " << n << "^3: " << tflops
     << " TFLOP/s = " << fraction << " of the vendor library's " << vendor_tflops << " TFLOP/s measured there; bound by "
     << slowest.bound << ", " << slowest.blocks_per_sm << " blocks per multiprocessor (limit: " << slowest.limit << "; "
     << registers << " registers per thread" << (kernels.size() > 1 ? ", the most of the file's kernels" : "")
     << "). The grade needs " << needed << ": " << min_fraction << " plus the model's largest optimistic error ("
     << 100 * optimism << "%, docs/results/perfmodel.md). " << traffic::describe(t, n);
  Measured(fraction, needed, "of the vendor library (predicted)")
      .suggest("min_predicted_fraction_of_vendor", 0.8)
      .judge(os.str(), "\n  hint: " + model_hint(slowest.bound));
}

}  // namespace

TEST(performance, predicted_fraction_of_vendor) {
  // The call is counted on the emulator at size^3 (every global and shared access, and the
  // instructions its threads executed), then the performance model predicts it on a GPU at
  // model_size^3 (docs/results/perfmodel.md). The measured call's C is checked: a kernel cannot
  // be fast at this size and right at others, and work done on the host or a decoy kernel does
  // not look efficient (the kit also requires kernels to read all of A and B).
  const Rubric& r = rubric();
  const int n = static_cast<int>(r.number("performance.emu", "size"));
  auto gen = rng();
  kit::Call call("sgemm " + describe({n, n, n, 1.0f, 0.0f}) + ", measured");
  const double err = check_problem(call, {n, n, n, 1.0f, 0.0f}, gen, defence_enabled("timed-outputs"));
  if (!(err <= 1)) return;
  const kit::Evidence& e = call.evidence();
  if (!e.available) {
    not_measured("this emulator build has no memory-access tracing (build the emu preset with clang++)");
    return;
  }
  kit::report_metrics(call);
  if (e.load_sectors == 0) {
    ADD_FAILURE() << "no kernel read global memory at " << n << "^3: C was not computed by kernels";
    return;
  }
  const traffic::Traffic t = traffic::of(call, n);
  std::string why;
  const std::vector<kit::KernelResources> kernels = kit::kernel_resources(why);
  const std::string model_name = r.text("performance.emu", "model").value_or("");
  std::string unusable;
  const perfmodel::Gpu* gpu = perfmodel::grading_gpu(model_name, unusable);
  // Built with the counting pass: some launch counted instructions. (A launch of a kernel from
  // outside the counted file is still predicted, from its traffic and shape: one such launch must
  // not turn the whole grade back into the traffic rule.)
  bool counted = false;
  for (const auto& l : e.launch_shapes) counted = counted || l.count("total") > 0;
  if (gpu && kernels.empty() && kit::nvcc_view(why) == kit::NvccView::refused &&
      kit::refuse_unpredicted(call.what(), why))
    return;  // the traffic rule is for machines without nvcc, not for files nvcc is not shown
  if (!gpu || kernels.empty() || !counted) {
    // Without a prediction: the traffic rule (bytes per FMA and bank conflicts), which cannot tell
    // a 1D register tile from a fast kernel (docs/results/verdict-agreement.md).
    if (!gpu) why = unusable + " (the rubric's performance.emu model)";
    else if (kernels.empty()) why = why.empty() ? "no registers per kernel" : why;
    else why = "the kernels were built without the instruction-counting pass (llvm-14-dev)";
    grade_by_traffic(t, n, why);
    return;
  }
  grade_by_prediction(call, t, kernels, *gpu, n);
}

#else  // GPU back-ends

/// A checked call on one input set of the timed runs (n^3, alpha 1, beta 0), compared with the
/// vendor library's result on the same inputs within twice the dot-product bound (both are float
/// computations; |a|, |b| <= 1, so sum |a b| <= n), and that result: what every timed run on that
/// set must give (the vendor's, not the call's own: a cheat cannot set its own yardstick). Empty
/// when the call failed (reported).
std::vector<float> checked_product(int n, const std::vector<float>& a, const std::vector<float>& b, const float* d_a,
                                   const float* d_b, float* c_vendor, int set) {
  const std::size_t nn = 1ull * n * n;
  const std::string which = "set " + std::to_string(set + 1);
  kit::Call call("sgemm " + describe({n, n, n, 1.0f, 0.0f}) + ", timed inputs, " + which);
  const float* A = call.input(a, "A");
  const float* B = call.input(b, "B");
  // beta == 0: C starts finite (reading it is beta_zero_does_not_read_c's business, not this check's).
  const std::vector<float> c0(nn, kUnwrittenC);
  float* C = call.output<float>(nn, "C", &c0);
  if (!call.run([&] { sgemm(n, n, n, 1.0f, A, B, 0.0f, C); })) return {};
  const std::vector<float> theirs = kit::measured_floats("vendor result " + which, [&] {
    lab06::vendor_sgemm(n, n, n, 1.0f, d_a, d_b, 0.0f, c_vendor);
    synchronize();
    std::vector<float> h(nn);
    copy_to_host(h.data(), c_vendor, nn * sizeof(float));
    return h;
  });
  const std::vector<float> got = call.result(C);
  if (!defence_enabled("timed-outputs")) return theirs;
  const double bound = 2 * gamma_bound(n) * n;
  std::size_t bad = 0, unwritten = 0;
  for (std::size_t i = 0; i < nn && theirs.size() == nn; ++i) {
    if (is_unwritten(got[i])) ++unwritten;
    else if (!(std::fabs(static_cast<double>(got[i]) - theirs[i]) <= bound)) ++bad;
  }
  if (bad || unwritten || theirs.size() != nn)
    ADD_FAILURE() << bad + unwritten << " elements of the timed " << n << "^3 product (" << which << ") differ from "
                  << lab06::vendor_name()
                  << (unwritten ? " (" + std::to_string(unwritten) + " of them were not written: they still hold " +
                                      kUnwrittenText + ", the value C held before the call)"
                                : std::string());
  return theirs;
}

TEST(performance, fraction_of_vendor_library) {
  std::string why;
  if (kit::measured("vendor library available", [&] { return lab06::vendor_available(why) ? 1.0 : 0.0; }) != 1.0) {
    if (why.empty()) lab06::vendor_available(why);
    not_measured(why.empty() ? "the vendor library could not be loaded in the lab process" : why);
    return;
  }
  const Rubric& r = rubric();
  const std::string section = backend_section("performance");
  const int n = static_cast<int>(r.number(section, "size"));
  const double min_fraction = r.number(section, "min_fraction_of_vendor");
  auto gen = rng();
  const std::size_t nn = 1ull * n * n;
  // Two input sets: the vendor library's timed runs alternate between them, the code under test's
  // take turns in the same buffers (kit::TimedCall), each set checked first.
  const std::vector<float> a0 = random_values(nn, gen), b0 = random_values(nn, gen);
  const std::vector<float> a1 = random_values(nn, gen), b1 = random_values(nn, gen);
  kit::DeviceData data;
  const float *A0 = data.upload(a0), *B0 = data.upload(b0), *A1 = data.upload(a1), *B1 = data.upload(b1);
  float* C_vendor = data.scratch<float>(nn);
  const std::vector<float> c_0 = checked_product(n, a0, b0, A0, B0, C_vendor, 0);
  const std::vector<float> c_1 = checked_product(n, a1, b1, A1, B1, C_vendor, 1);
  if (c_0.empty() || c_1.empty()) return;
  kit::TimedCall timed("sgemm", 2);
  const float* A = timed.rotated<float>({&a0, &a1});
  const float* B = timed.rotated<float>({&b0, &b1});
  float* C = timed.output<float>(nn);
  timed.check<float>(C, {&c_0, &c_1}, 2 * gamma_bound(n) * n, "C");
  const double nd = n;
  Timing mine, vendor;
  const kit::Ratio ratio = kit::measure_ratio(min_fraction, [&] {
    mine = timed.time([&] { sgemm(n, n, n, 1.0f, A, B, 0.0f, C); }, kit::Work{8 * nd * nd, 4 * nd * nd, 2 * nd * nd * nd});
    vendor = kit::time("vendor_sgemm", [&](int i) {
      lab06::vendor_sgemm(n, n, n, 1.0f, i % 2 ? A1 : A0, i % 2 ? B1 : B0, 0.0f, C_vendor);
    });
    return kit::Ratio{vendor.median_ms / mine.median_ms, mine.rse + vendor.rse + 0.01, ""};
  });
  const double fraction = ratio.value;
  const double tflops = 2.0 * n * n * n / (mine.median_ms * 1e-3) / 1e12;
  const double vendor_tflops = 2.0 * n * n * n / (vendor.median_ms * 1e-3) / 1e12;
  info("sgemm_tflops", std::to_string(tflops));
  info("vendor_tflops", std::to_string(vendor_tflops));
  info("vendor", lab06::vendor_name());
  std::ostringstream os;
  os.precision(3);
  os << n << "^3: " << tflops << " TFLOP/s = " << fraction << " of " << lab06::vendor_name() << "'s " << vendor_tflops
     << " TFLOP/s (medians of " << mine.samples << " and " << vendor.samples << " runs"
     << (ratio.remeasured ? ", measured twice: the first was within noise of the threshold" : "") << ")";
  Measured(fraction, min_fraction, "of " + lab06::vendor_name())
      .suggest("min_fraction_of_vendor", 0.8)
      .judge(os.str(), ", below " + kit::num(min_fraction) +
                           "\n  hint: follow the steps of labs/06-sgemm/README.md; ncu's report says whether the"
                           " kernel is memory- or compute-bound");
}

#endif
