// solutions/06-sgemm/bench/sgemm_ladder.cu - every step of the SGEMM ladder against cuBLAS,
// at several sizes, in one run: TFLOP/s, % of cuBLAS, and a correctness check.
//
//   sgemm_ladder [--sizes 1024,2048,4096,8192] [--steps 1,2,...,10] [--budget-ms 300]
//                [--min-runs 3] [--max-runs 50] [--seed S]
//
// For each square size n: random A, B (n x n); cuBLAS (cublasSgemm, FP32, default math mode,
// row-major through the transpose trick) gives the reference result and the reference time.
// Each step runs once on a NaN-poisoned C with beta = 0 and must match cuBLAS to a relative
// Frobenius error of 1e-4 (FP32 lands near 1e-6; TF32 would land near 3e-4); then it is
// timed: one warm-up, L2 flushed before each timed run, GPU events, median over the runs that
// fit in --budget-ms (at least --min-runs). Exit status 1 if any step is wrong.
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "steps.hpp"

namespace {

std::vector<int> parse_list(const char* s) {
  std::vector<int> v;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) v.push_back(std::stoi(item));
  return v;
}

struct Row {
  std::string step;
  int n;
  double ms, tflops, percent, error;
  bool ok;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {1024, 2048, 4096, 8192};
  std::vector<int> steps;  // 1-based indices into kLadder; empty = all
  double budget_ms = 300;
  int min_runs = 3, max_runs = 50;
  unsigned seed = 2024;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--sizes") sizes = parse_list(argv[i + 1]);
    else if (a == "--steps") steps = parse_list(argv[i + 1]);
    else if (a == "--budget-ms") budget_ms = std::stod(argv[i + 1]);
    else if (a == "--min-runs") min_runs = std::stoi(argv[i + 1]);
    else if (a == "--max-runs") max_runs = std::stoi(argv[i + 1]);
    else if (a == "--seed") seed = static_cast<unsigned>(std::stoul(argv[i + 1]));
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  const int ladder_size = static_cast<int>(std::size(sgemm_steps::kLadder));
  if (steps.empty())
    for (int s = 1; s <= ladder_size; ++s) steps.push_back(s);

  const gpulab::DeviceInfo dev = gpulab::device_info();
  std::printf("SGEMM ladder on %s (%d SMs, L2 %zu MB, SM clock %d MHz), seed %u\n",
              dev.name.c_str(), dev.multiprocessors, dev.l2_bytes >> 20, dev.clock_khz / 1000,
              seed);
  cublasHandle_t handle = sgemm_bench::make_cublas();
  sgemm_bench::L2Flusher flusher;
  std::vector<Row> rows;
  std::vector<double> cublas_tflops;
  bool all_ok = true;

  for (const int n : sizes) {
    sgemm_bench::Problem p(n, n, n, seed);
    const float alpha = 1.0f, beta = 0.0f;
    sgemm_bench::cublas_sgemm_row_major(handle, n, n, n, alpha, p.A.data(), p.B.data(), beta,
                                        p.Cref.data());
    const sgemm_bench::Timing tc = sgemm_bench::time_gpu(
        [&] {
          sgemm_bench::cublas_sgemm_row_major(handle, n, n, n, alpha, p.A.data(), p.B.data(),
                                              beta, p.C.data());
        },
        flusher, budget_ms, min_runs, max_runs);
    const double ref_tflops = sgemm_bench::tflops(n, n, n, tc.median_ms);
    cublas_tflops.push_back(ref_tflops);
    std::printf("\n%d^3: cuBLAS %.3f ms = %.2f TFLOP/s (median of %d)\n", n, tc.median_ms,
                ref_tflops, tc.runs);
    for (const int s : steps) {
      if (s < 1 || s > ladder_size) continue;
      const sgemm_steps::Step& step = sgemm_steps::kLadder[s - 1];
      p.C.poison();
      step.run(n, n, n, alpha, p.A.data(), p.B.data(), beta, p.C.data());
      gpulab::synchronize();
      const sgemm_bench::ErrorReport err =
          sgemm_bench::relative_error(p.C.data(), p.Cref.data(), p.C.size());
      const bool ok = err.ok(1e-4);
      all_ok = all_ok && ok;
      const sgemm_bench::Timing t = sgemm_bench::time_gpu(
          [&] { step.run(n, n, n, alpha, p.A.data(), p.B.data(), beta, p.C.data()); }, flusher,
          budget_ms, min_runs, max_runs);
      const double tf = sgemm_bench::tflops(n, n, n, t.median_ms);
      rows.push_back({step.name, n, t.median_ms, tf, 100.0 * tf / ref_tflops, err.relative, ok});
      std::printf("  %-24s %9.3f ms %7.2f TFLOP/s %6.1f%% of cuBLAS  rel.err %.1e%s%s\n",
                  step.name, t.median_ms, tf, 100.0 * tf / ref_tflops, err.relative,
                  ok ? "" : "  <-- WRONG",
                  err.non_finite ? (" (" + std::to_string(err.non_finite) + " NaN/Inf)").c_str()
                                 : "");
      std::fflush(stdout);
    }
  }
  cublasDestroy(handle);

  // Compact table: one row per step, TFLOP/s and % of cuBLAS per size.
  std::printf("\n%-24s", "step \\ n^3");
  for (int n : sizes) std::printf(" | %5d: TFLOP/s  %%cuBLAS", n);
  std::printf("\n%-24s", "cuBLAS");
  for (double tf : cublas_tflops) std::printf(" | %13.2f  %7.1f", tf, 100.0);
  for (const int s : steps) {
    if (s < 1 || s > ladder_size) continue;
    std::printf("\n%-24s", sgemm_steps::kLadder[s - 1].name);
    for (int n : sizes)
      for (const Row& r : rows)
        if (r.n == n && r.step == sgemm_steps::kLadder[s - 1].name)
          std::printf(" | %13.2f  %7.1f%s", r.tflops, r.percent, r.ok ? "" : " WRONG");
  }
  std::printf("\n%s\n", all_ok ? "all results match cuBLAS (relative error <= 1e-4)"
                               : "SOME RESULTS ARE WRONG (see '<-- WRONG' above)");
  return all_ok ? 0 : 1;
}
