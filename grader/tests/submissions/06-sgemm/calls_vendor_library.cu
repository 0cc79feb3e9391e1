// Calls cuBLAS instead of computing: refused at build time (and it could not link anyway).
// expect: lab fail
// expect: correctness fail "does not allow"
#include <dlfcn.h>

#include "gpulab/gpu.hpp"
#include "sgemm.hpp"

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  void* lib = dlopen("libcublas.so", RTLD_NOW);
  (void)lib; (void)M; (void)N; (void)K; (void)alpha; (void)A; (void)B; (void)beta; (void)C;
}
