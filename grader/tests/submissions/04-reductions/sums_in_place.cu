// Folds the input onto itself: x[i] += x[i + keep] over halving lengths until x[0] holds the sum,
// then copies x[0] out. Every sum is right (a tree of depth log2 n), but the contract's x is
// const and must come back unchanged; the kit digests every input before and after each call
// and names the one a call changed, on every back-end.
// expect: lab fail
// expect: correctness fail "modified the input x"
#include "gpulab/gpu.hpp"
#include "reduce.hpp"

__global__ void fold(float* x, int count, int keep) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) x[i] += x[i + keep];
}

__global__ void copy_first(const float* x, float* result) { *result = x[0]; }

void reduce_sum(const float* x, int n, float* result) {
  float* w = const_cast<float*>(x);
  for (int m = n; m > 1;) {
    const int keep = (m + 1) / 2;  // elements [keep, m) fold onto [0, m - keep)
    fold<<<(m - keep + 255) / 256, 256>>>(w, m - keep, keep);
    m = keep;
  }
  copy_first<<<1, 1>>>(x, result);
}
