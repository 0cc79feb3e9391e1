// docs/results/perfmodel/ladder/ladder_counts.cu - what the emulator counts for each step of lab 06's SGEMM
// ladder (solutions/06-sgemm/steps), the input of the performance model (docs/results/perfmodel/model.py).
//
//   perfmodel-ladder-counts [n]     (default 256: every step takes its fast path at multiples of 128)
//
// Step 10 (the reference) picks its tile shape by size: at n where the 128 x 128 tiles are fewer
// than an H200's 132 SMs (n < 1,470) it runs its small 64 x 64 tiles. The row "10" is its large
// shape, the one the H200's ladder measures at 4096^3; "10s" is the shape it picks at this n.
//
// Per step, one n x n x n product on the emulator with its access tracing and the instruction-
// counting pass (common/emu/passes/count_pass.cpp): one TSV row with the instructions the emulated
// threads executed by class, the global sectors and requests of loads and stores, and the shared
// memory requests and wavefronts. Each product's result is checked against a float64 product, so
// a row never describes a kernel that went wrong.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "sgemm_counter.hpp"
#include "sgemm_configs.hpp"
#include "steps.hpp"

int main(int argc, char** argv) {
  const int n = perfmodel::size_argument(argc, argv);
  if (n == 0) return 2;
  perfmodel::SgemmCounter counter(n);
  perfmodel::SgemmCounter::print_header();
  int failures = 0;
  struct Row {
    const char* name;
    sgemm_steps::SgemmFn run;
  };
  std::vector<Row> rows;
  for (const auto& step : sgemm_steps::kLadder) {
    if (step.run == sgemm_step10_final) {
      rows.push_back({"10 final, large tiles", [](int M, int N, int K, float alpha, const float* A, const float* B,
                                                  float beta, float* C) {
                        sgemm_ref::launch_tiled<sgemm_ref::LargeConfig>(M, N, K, alpha, A, B, beta, C,
                                                                        sgemm_ref::kRasterRows);
                      }});
      rows.push_back({"10s final, as picked at this n", step.run});
    } else {
      rows.push_back({step.name, step.run});
    }
  }
  for (const auto& step : rows) failures += !counter.row(step.name, step.run);
  return failures ? 1 : 0;
}
