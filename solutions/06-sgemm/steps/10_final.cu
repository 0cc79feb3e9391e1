// Step 10 - final: the reference solution (solutions/06-sgemm/sgemm.cu).
//
// Change vs step 09: the same algorithm with every tile size a template parameter, set to the
// shape that measured fastest on the H200 (bench/sgemm_tune.cu; docs/results/sgemm-h200.md);
// blocks visit tiles in bands of rows so that the blocks running together reuse the same
// panels of A and B from the L2 cache; and sizes that are not tile multiples run the same
// kernel with bounds-checked loads and stores instead of falling back to step 03.
#include "sgemm.hpp"
#include "steps.hpp"

void sgemm_step10_final(int M, int N, int K, float alpha, const float* A, const float* B,
                        float beta, float* C) {
  sgemm(M, N, K, alpha, A, B, beta, C);
}
