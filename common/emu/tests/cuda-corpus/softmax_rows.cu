// Row-wise softmax of a rows x cols matrix, two ways: one block per row with the row staged in
// dynamic shared memory (block max and block sum over warpSize-wide shuffles), and one warp per
// row with an online (running max, running sum) pass merged across lanes.
// Covers: <<<grid, block, shared>>>, extern __shared__, run-time warpSize, a template kernel.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK(call)                                                                         \
  do {                                                                                      \
    const cudaError_t err_ = (call);                                                        \
    if (err_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                    \
                   cudaGetErrorString(err_));                                               \
      std::exit(2);                                                                         \
    }                                                                                       \
  } while (0)

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

template <class Op>
__device__ float warp_all_reduce(float v, Op op) {
  const auto lanes = __activemask();
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(lanes, v, offset));
  return v;
}

// Every thread gets the block's result. scratch: one float per warp (at most 32 warps).
template <class Op>
__device__ float block_all_reduce(float v, Op op, float identity, float* scratch) {
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  const int warps = blockDim.x / warpSize;
  v = warp_all_reduce(v, op);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : identity;
  return warp_all_reduce(v, op);
}

// Shared memory: cols floats (the row).
__global__ void softmax_block_per_row(const float* __restrict__ x, float* __restrict__ y, int cols) {
  extern __shared__ float row[];
  __shared__ float scratch[32];
  const float* in = x + static_cast<size_t>(blockIdx.x) * cols;
  float* out = y + static_cast<size_t>(blockIdx.x) * cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    row[c] = in[c];
    m = fmaxf(m, row[c]);
  }
  m = block_all_reduce(m, MaxOp{}, -INFINITY, scratch);
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float e = expf(row[c] - m);
    row[c] = e;
    s += e;
  }
  s = block_all_reduce(s, SumOp{}, 0.0f, scratch);
  const float inv = 1.0f / s;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = row[c] * inv;
}

// One warp per row; blockDim.x a multiple of warpSize.
__global__ void softmax_warp_online(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  const int lane = threadIdx.x % warpSize;
  const int r = (blockIdx.x * blockDim.x + threadIdx.x) / warpSize;
  if (r >= rows) return;  // a whole warp leaves together
  const float* in = x + static_cast<size_t>(r) * cols;
  float* out = y + static_cast<size_t>(r) * cols;
  float m = -INFINITY, s = 0.0f;
  for (int c = lane; c < cols; c += warpSize) {
    const float v = in[c];
    const float nm = fmaxf(m, v);
    s = s * expf(m - nm) + expf(v - nm);
    m = nm;
  }
  const auto lanes = __activemask();
  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    const float om = __shfl_xor_sync(lanes, m, offset);
    const float os = __shfl_xor_sync(lanes, s, offset);
    const float nm = fmaxf(m, om);
    const float a = m == -INFINITY ? 0.0f : s * expf(m - nm);
    const float b = om == -INFINITY ? 0.0f : os * expf(om - nm);
    s = a + b;
    m = nm;
  }
  const float inv = 1.0f / s;
  for (int c = lane; c < cols; c += warpSize) out[c] = expf(in[c] - m) * inv;
}

int main() {
  CHECK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int rows = 300, cols = 1000;
  const size_t count = static_cast<size_t>(rows) * cols;
  std::vector<float> h(count), got(count);
  std::vector<double> ref(count);
  std::mt19937 gen(7);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  for (float& v : h) v = dist(gen);
  for (int r = 0; r < rows; ++r) {
    const float* in = &h[static_cast<size_t>(r) * cols];
    double m = in[0], s = 0.0;
    for (int c = 1; c < cols; ++c) m = std::fmax(m, in[c]);
    for (int c = 0; c < cols; ++c) s += std::exp(in[c] - m);
    for (int c = 0; c < cols; ++c) ref[static_cast<size_t>(r) * cols + c] = std::exp(in[c] - m) / s;
  }
  float *d_x = nullptr, *d_y = nullptr;
  CHECK(cudaMalloc(&d_x, count * sizeof(float)));
  CHECK(cudaMalloc(&d_y, count * sizeof(float)));
  CHECK(cudaMemcpy(d_x, h.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  int failures = 0;
  const double tol = 1e-5;  // max absolute error; every output is in [0, 1]
  for (int version = 0; version < 2; ++version) {
    const char* name = version == 0 ? "block_per_row_shared" : "warp_per_row_online";
    CHECK(cudaMemset(d_y, 0, count * sizeof(float)));
    CHECK(cudaEventRecord(start));
    if (version == 0) {
      softmax_block_per_row<<<rows, 256, cols * sizeof(float)>>>(d_x, d_y, cols);
    } else {
      const int threads = 256;
      const int rows_per_block = threads / prop.warpSize;
      softmax_warp_online<<<(rows + rows_per_block - 1) / rows_per_block, threads>>>(d_x, d_y, rows, cols);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(got.data(), d_y, count * sizeof(float), cudaMemcpyDeviceToHost));
    double err = 0.0;
    for (size_t i = 0; i < count; ++i) {
      const double e = std::fabs(got[i] - ref[i]);
      if (std::isnan(e) || e > err) err = e;  // a NaN sticks
    }
    const bool ok = err <= tol;
    failures += !ok;
    std::printf("VERSION %s %s %.3e\n", name, ok ? "PASS" : "FAIL", err);
    std::printf("  time %s %.3f ms\n", name, ms);
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d_x));
  CHECK(cudaFree(d_y));
  return failures ? 1 : 0;
}
