// solutions/06-sgemm/tests/sgemm_steps_test.cu - correctness of every ladder step and of the
// reference on awkward sizes, against a float64 CPU reference. Runs on every back-end (on the
// emulator too, where it is the only check that needs no GPU): small sizes only.
//
//   sgemm_steps_test [--seed S] [--verbose]   (--verbose: the time of every run)
//
// Each case: fresh random A, B (and C when beta != 0); C poisoned with NaN when beta == 0
// (a kernel that reads C then fails); each element compared with a tolerance from the
// float32 error bound of a K-term dot product; A and B must come back unchanged.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpulab/host.hpp"
#include "gpulab/gpu.hpp"
#include "sgemm_configs.hpp"
#include "steps.hpp"

namespace {

// The reference picks one of two tile shapes by problem size; run each on every case too.
void reference_large(int M, int N, int K, float alpha, const float* A, const float* B,
                     float beta, float* C) {
  sgemm_ref::launch_tiled<sgemm_ref::LargeConfig>(M, N, K, alpha, A, B, beta, C, 3);  // 3: a
  // band height that does not divide the tile rows, so the last band is a short one
}
void reference_small(int M, int N, int K, float alpha, const float* A, const float* B,
                     float beta, float* C) {
  sgemm_ref::launch_tiled<sgemm_ref::SmallConfig>(M, N, K, alpha, A, B, beta, C, 3);
}

struct Case {
  int M, N, K;
  float alpha, beta;
  int misalign;  ///< offset the pointers by this many floats (1: not 16-byte aligned)
};

// Sizes the grader also uses (1 x 1 x 1, 127 x 129 x 65, 1000 x 1 x 300, K = 1), whole
// tiles (the fast paths), ragged edges, and misaligned pointers (fast paths must step aside).
const Case kCases[] = {
    {1, 1, 1, 1.0f, 0.0f, 0},        {127, 129, 65, 1.5f, 0.0f, 0},
    {127, 129, 65, -0.75f, 0.5f, 0}, {1000, 1, 300, 1.0f, 0.0f, 0},
    {1, 300, 17, 2.0f, -1.0f, 0},    {5, 7, 1, 1.0f, 0.0f, 0},
    {130, 70, 90, 0.5f, 2.0f, 0},    {128, 128, 8, 1.0f, 0.0f, 0},
    {128, 128, 8, -1.0f, 1.0f, 0},   {256, 256, 64, 1.25f, 0.0f, 0},
    {256, 128, 24, 1.0f, -0.5f, 0},  {128, 256, 16, 1.0f, 0.0f, 1},
    {129, 128, 8, 1.0f, 0.0f, 0},    {128, 128, 12, 1.0f, 0.25f, 0},
    {300, 200, 40, 1.0f, 0.0f, 0},   {257, 385, 33, -2.0f, 0.75f, 0},
    // Not tile multiples, rows 16-byte aligned: the float4-checked variant (with beta: C read
    // back as float4 too); K a multiple of 4 but not of the tile's 8 (a partial last K tile);
    // then shapes with the pointers one float off, or N not a multiple of 4, where every
    // element is checked.
    {260, 388, 48, -1.0f, 0.5f, 0},  {300, 200, 40, 1.0f, 0.0f, 1},
    {131, 132, 44, 1.0f, 0.0f, 0},   {131, 132, 44, 0.5f, -1.0f, 0},
    {4, 8, 4, 1.0f, 0.0f, 0},        {132, 130, 44, 1.0f, 0.0f, 0},
};

struct Failure {
  long bad = 0;
  double worst_ratio = 0;  ///< max |err| / tolerance over the elements
  std::string first;
};

Failure compare(const Case& c, const std::vector<float>& A, const std::vector<float>& B,
                const std::vector<float>& C0, const std::vector<float>& got) {
  Failure f;
  for (int i = 0; i < c.M; ++i)
    for (int j = 0; j < c.N; ++j) {
      double dot = 0, mag = 0;
      for (int k = 0; k < c.K; ++k) {
        const double p = static_cast<double>(A[static_cast<size_t>(i) * c.K + k]) *
                         B[static_cast<size_t>(k) * c.N + j];
        dot += p;
        mag += std::fabs(p);
      }
      const size_t idx = static_cast<size_t>(i) * c.N + j;
      double ref = c.alpha * dot;
      mag = std::fabs(c.alpha) * mag;
      if (c.beta != 0.0f) {
        ref += c.beta * static_cast<double>(C0[idx]);
        mag += std::fabs(c.beta * static_cast<double>(C0[idx]));
      }
      // float32 dot product of K terms: |error| <= ~K * 2^-24 * sum |terms|; 2x margin.
      const double tol = 2.0 * (c.K + 2) * std::ldexp(1.0, -24) * mag + 1e-30;
      const double err = std::fabs(static_cast<double>(got[idx]) - ref);
      if (!(err <= tol)) {  // NaN fails too
        if (f.bad++ == 0) {
          char buf[200];
          std::snprintf(buf, sizeof buf, "C[%d][%d] = %.9g, expected %.9g (tolerance %.3g)", i,
                        j, got[idx], ref, tol);
          f.first = buf;
        }
      }
      if (err / tol > f.worst_ratio || std::isnan(err)) f.worst_ratio = err / tol;
    }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned seed = std::random_device{}();
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
      seed = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    else if (std::strcmp(argv[i], "--verbose") == 0)
      verbose = true;
  }
  std::printf("sgemm_steps_test: back-end %s, device %s, seed %u\n", gpulab::backend(),
              gpulab::device_info().name.c_str(), seed);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);

  int failures = 0, checks = 0;
  for (const Case& c : kCases) {
    const size_t a_n = static_cast<size_t>(c.M) * c.K, b_n = static_cast<size_t>(c.K) * c.N,
                 c_n = static_cast<size_t>(c.M) * c.N;
    std::vector<float> A(a_n), B(b_n), C0(c_n);
    for (float& x : A) x = uniform(rng);
    for (float& x : B) x = uniform(rng);
    for (float& x : C0) x = uniform(rng);
    // Device buffers with room for the misalignment offset.
    gpulab::DeviceBuffer<float> dA(a_n + 4), dB(b_n + 4), dC(c_n + 4);
    float* pA = dA.data() + c.misalign;
    float* pB = dB.data() + c.misalign;
    float* pC = dC.data() + c.misalign;
    gpulab::copy_to_device(pA, A.data(), a_n * sizeof(float));
    gpulab::copy_to_device(pB, B.data(), b_n * sizeof(float));

    std::vector<sgemm_steps::Step> implementations(std::begin(sgemm_steps::kLadder),
                                                   std::end(sgemm_steps::kLadder));
    implementations.push_back({"reference, large tiles", reference_large});
    implementations.push_back({"reference, small tiles", reference_small});
    for (const sgemm_steps::Step& step : implementations) {
      ++checks;
      if (c.beta == 0.0f)
        dC.poison();  // NaN: must be overwritten without being read
      else
        gpulab::copy_to_device(pC, C0.data(), c_n * sizeof(float));
      std::string error;
      std::vector<float> got(c_n), A_after(a_n), B_after(b_n);
      const auto start = std::chrono::steady_clock::now();
      try {
        step.run(c.M, c.N, c.K, c.alpha, pA, pB, c.beta, pC);
        gpulab::synchronize();
        gpulab::copy_to_host(got.data(), pC, c_n * sizeof(float));
        gpulab::copy_to_host(A_after.data(), pA, a_n * sizeof(float));
        gpulab::copy_to_host(B_after.data(), pB, b_n * sizeof(float));
      } catch (const gpulab::Error& e) {
        error = e.what();
      }
      if (verbose)
        std::printf("  %-24s M=%d N=%d K=%d: %.1f ms\n", step.name, c.M, c.N, c.K,
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                              start).count());
      if (error.empty() && (A_after != A || B_after != B)) error = "A or B was modified";
      Failure f;
      if (error.empty()) f = compare(c, A, B, C0, got);
      const bool ok = error.empty() && f.bad == 0;
      if (!ok) {
        ++failures;
        const std::string why =
            error.empty() ? std::to_string(f.bad) + " wrong elements, first " + f.first : error;
        std::printf("FAIL %-24s M=%d N=%d K=%d alpha=%g beta=%g misalign=%d: %s\n", step.name,
                    c.M, c.N, c.K, c.alpha, c.beta, c.misalign, why.c_str());
      }
    }
  }
  std::printf("%d of %d checks passed (%zu steps + 2 reference shapes, %zu cases)\n",
              checks - failures, checks, std::size(sgemm_steps::kLadder), std::size(kCases));
  return failures == 0 ? 0 : 1;
}
