// C = A * B for M x K and K x N row-major float matrices whose sides are not multiples of the
// tile: a naive kernel, a shared-memory tiled kernel templated on the tile (8 and 16), and a
// tiled kernel whose tile is chosen at run time with both tiles in dynamic shared memory.
// Covers: template kernels, dim3 launches, static and extern __shared__, <<<g, b, shared>>>.
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

__global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

template <int TILE>
__global__ void matmul_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                             int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  const int ty = threadIdx.y, tx = threadIdx.x;
  const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

// Tile = blockDim.x = blockDim.y; shared memory: 2 * tile * tile floats.
__global__ void matmul_tiled_dynamic(const float* __restrict__ A, const float* __restrict__ B,
                                     float* __restrict__ C, int M, int N, int K) {
  extern __shared__ float smem[];
  const int tile = blockDim.x;
  float* As = smem;
  float* Bs = smem + tile * tile;
  const int ty = threadIdx.y, tx = threadIdx.x;
  const int row = blockIdx.y * tile + ty, col = blockIdx.x * tile + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += tile) {
    As[ty * tile + tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    Bs[ty * tile + tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < tile; ++k) acc += As[ty * tile + k] * Bs[k * tile + tx];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

int main() {
  CHECK(cudaSetDevice(0));
  const int M = 200, N = 176, K = 150;
  std::vector<float> A(M * K), B(K * N), got(M * N);
  std::vector<double> ref(M * N), scale(M * N);
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : A) v = dist(gen);
  for (float& v : B) v = dist(gen);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0.0, a = 0.0;
      for (int k = 0; k < K; ++k) {
        s += static_cast<double>(A[i * K + k]) * B[k * N + j];
        a += std::fabs(static_cast<double>(A[i * K + k]) * B[k * N + j]);
      }
      ref[i * N + j] = s;
      scale[i * N + j] = a;
    }
  float *dA = nullptr, *dB = nullptr, *dC = nullptr;
  CHECK(cudaMalloc(&dA, A.size() * sizeof(float)));
  CHECK(cudaMalloc(&dB, B.size() * sizeof(float)));
  CHECK(cudaMalloc(&dC, got.size() * sizeof(float)));
  CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  int failures = 0;
  const double tol = 5e-5;  // per element, relative to sum_k |a_ik b_kj| (worst case K * eps = 9e-6)
  const char* names[] = {"naive", "tiled_8", "tiled_16", "tiled_dynamic_16"};
  for (int version = 0; version < 4; ++version) {
    CHECK(cudaMemset(dC, 0, got.size() * sizeof(float)));
    CHECK(cudaEventRecord(start));
    if (version == 0) {
      matmul_naive<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16)>>>(dA, dB, dC, M, N, K);
    } else if (version == 1) {
      matmul_tiled<8><<<dim3((N + 7) / 8, (M + 7) / 8), dim3(8, 8)>>>(dA, dB, dC, M, N, K);
    } else if (version == 2) {
      matmul_tiled<16><<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16)>>>(dA, dB, dC, M, N, K);
    } else {
      const int tile = 16;
      matmul_tiled_dynamic<<<dim3((N + tile - 1) / tile, (M + tile - 1) / tile), dim3(tile, tile),
                             2 * tile * tile * sizeof(float)>>>(dA, dB, dC, M, N, K);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(got.data(), dC, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    double err = 0.0;
    for (int i = 0; i < M * N; ++i) {
      const double e = std::fabs(got[i] - ref[i]) / (scale[i] + 1e-30);
      if (std::isnan(e) || e > err) err = e;
    }
    const bool ok = err <= tol;
    failures += !ok;
    std::printf("VERSION %s %s %.3e\n", names[version], ok ? "PASS" : "FAIL", err);
    std::printf("  time %s %.3f ms\n", names[version], ms);
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(dA));
  CHECK(cudaFree(dB));
  CHECK(cudaFree(dC));
  return failures ? 1 : 0;
}
