// Idiom: a kernel template launched with <<<>>>, its template argument deduced from the launch's
// arguments (row_sum_rows<<<n, kThreads>>>(m, sums, n) instantiates row_sum_rows<float>).
// expect: lab pass
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

constexpr int kThreads = 256;

template <class T>
__device__ T block_sum(T v) {
  __shared__ T warp_sums[64];
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset));
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  const int warps = (static_cast<int>(blockDim.x) + warpSize - 1) / warpSize;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? warp_sums[lane] : T(0);
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
      v += __shfl_down_sync(gpulab::full_mask(), v, static_cast<unsigned>(offset));
  }
  return v;
}

// Rows read as 16-byte vectors; V is the vector type of T (float4 for float).
template <class V, class T>
__global__ void row_sum_vectors(const V* __restrict__ m, T* __restrict__ sums, int n) {
  const V* row = m + static_cast<long long>(blockIdx.x) * (n / 4);
  T s = 0;
  for (int c = threadIdx.x; c < n / 4; c += blockDim.x) {
    const V q = row[c];
    s += (q.x + q.y) + (q.z + q.w);
  }
  s = block_sum(s);
  if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

template <class T>
__global__ void row_sum_rows(const T* __restrict__ m, T* __restrict__ sums, int n) {
  const T* row = m + static_cast<long long>(blockIdx.x) * n;
  T s = 0;
  for (int c = threadIdx.x; c < n; c += blockDim.x) s += row[c];
  s = block_sum(s);
  if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  const bool aligned = reinterpret_cast<unsigned long long>(m) % 16 == 0;
  if (n % 4 == 0 && aligned)
    row_sum_vectors<<<n, kThreads>>>(reinterpret_cast<const float4*>(m), sums, n);  // <float4, float>
  else
    row_sum_rows<<<n, kThreads>>>(m, sums, n);  // <float>
}
