// Calls the grader's own yardstick instead of computing: lab06::vendor_sgemm (declared in
// grader/labs/06-sgemm/vendor_blas.hpp, linked into every lab 06 executable).
// defence: symbols
// expect: lab fail
// expect: correctness fail "no grader internals"
#include "gpulab/gpu.hpp"
#include "sgemm.hpp"

namespace lab06 {
void vendor_sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C);
}

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  lab06::vendor_sgemm(M, N, K, alpha, A, B, beta, C);
}
