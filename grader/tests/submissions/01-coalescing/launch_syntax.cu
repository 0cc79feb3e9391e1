// A correct row sum written as plain CUDA: a <<<>>> launch of a kernel template, no gpulab
// header. On the emu back-end the grader translates the launch (common/emu/cuda2emu) before compiling.
// expect: lab pass
// expect: correctness pass
// expect: performance pass
#include "row_sum.hpp"

// One block per row: the threads read neighbouring columns (coalesced), then a tree reduction
// in shared memory.
template <int Block>
__global__ void row_sums(const float* m, float* sums, int n) {
  __shared__ float partial[Block];
  float s = 0;
  for (int c = threadIdx.x; c < n; c += Block) s += m[static_cast<long long>(blockIdx.x) * n + c];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int half = Block / 2; half > 0; half >>= 1) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = partial[0];
}

void row_sum(const float* m, float* sums, int n) {
  constexpr int block = 128;
  row_sums<block><<<n,
                    block>>>(m, sums, n);
}
