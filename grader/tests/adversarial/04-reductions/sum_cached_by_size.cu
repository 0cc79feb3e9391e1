// Remembers the sum it computed for each n and hands it back on the next call of the same n:
// a kernel still reads all of x (a decoy) and writes *result, from the remembered value. Right for
// the first array of every size, wrong for the next one (the contract: a function of its
// arguments, the values x points to).
// defence: call-order
// expect: lab fail
// expect: correctness fail "reduce_sum on data set B was wrong when called after reduce_sum on A"
#include <map>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "reduce.hpp"

namespace {

// One block: a grid-stride sum into *result (exact for the check's integer inputs).
__global__ void sum_one_block(const float* x, int n, float* result) {
  __shared__ float partial[256];
  float v = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) v += x[i];
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) *result = partial[0];
}

__global__ void keep(const float* result, float* kept) { *kept = *result; }

// Reads x (nothing it sums is kept) and writes the remembered sum.
__global__ void replay(const float* x, int n, const float* kept, float* result) {
  __shared__ float partial[256];
  float v = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) v += x[i];
  partial[threadIdx.x] = v;
  __syncthreads();
  if (threadIdx.x == 0) *result = partial[0] == 3.0e38f ? partial[0] : *kept;
}

std::map<int, float*> memo;  // n -> the sum, in device memory

}  // namespace

void reduce_sum(const float* x, int n, float* result) {
  if (const auto it = memo.find(n); it != memo.end()) {
    gpulab::launch(replay, 1, 256, 0, x, n, it->second, result);
    return;
  }
  gpulab::launch(sum_one_block, 1, 256, 0, x, n, result);
  float* kept = static_cast<float*>(gpulab::device_malloc(sizeof(float)));
  gpulab::launch(keep, 1, 1, 0, result, kept);
  memo[n] = kept;
}
