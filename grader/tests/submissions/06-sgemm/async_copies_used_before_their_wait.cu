// Asynchronous copies used before their wait: the pipelined kernel of the idiom
// pipeline_async_copies.cu, but each step waits for all but the two most recent batches
// (__pipeline_wait_prior(2)), so the tile it is about to use may still be in flight. On the
// emulator a copy lands at the latest moment the hardware allows, the wait that covers it: the
// products read the stage's old contents and come out wrong. On a GPU the copies often land in time
// and the result varies from run to run: no verdict is stated there.
// expect[emu]: lab fail
// expect[emu]: correctness fail "elements are wrong"
#include <cstdint>

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include "sgemm.hpp"

namespace {

// Blocks of 128 x 128 of C, K in steps of 8; 4 warps of 64 x 64; 8 x 16 outputs per thread, in
// 4 x 4 pieces spread over the warp's rectangle.
constexpr int BM = 128, BN = 128, BK = 8, WM = 64, WN = 64, TM = 8, TN = 16;
constexpr int kWarpsN = BN / WN;
constexpr int kThreads = (BM / WM) * kWarpsN * 32;
constexpr int kLanesN = WN / TN;
constexpr int kStepM = WM / (TM / 4), kStepN = WN / (TN / 4);
constexpr int kLdA = BM + 4;  // padded rows of the transposed A tile
constexpr int kLoadsA = BM * BK / 4 / kThreads, kLoadsB = BK * BN / 4 / kThreads;

__global__ void __launch_bounds__(kThreads, 2)
    sgemm_tiles(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
                float beta, float* __restrict__ C) {
  __shared__ __align__(16) float As[2][BK][kLdA];  // A tile, transposed: As[stage][k][m]
  __shared__ __align__(16) float Bs[2][BK][BN];
  const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int row0 = (warp / kWarpsN) * WM + (lane / kLanesN) * 4;
  const int col0 = (warp % kWarpsN) * WN + (lane % kLanesN) * 4;

  // The copies of the tiles at k0 into `stage`, as one batch.
  auto issue = [&](int stage, int k0) {
#pragma unroll
    for (int s = 0; s < kLoadsA; ++s) {
      const int f = t + s * kThreads, r = f / (BK / 4), k = (f % (BK / 4)) * 4;
      const float* src = A + static_cast<std::size_t>(block_row + r) * K + k0 + k;
#pragma unroll
      for (int q = 0; q < 4; ++q) __pipeline_memcpy_async(&As[stage][k + q][r], src + q, 4);
    }
#pragma unroll
    for (int s = 0; s < kLoadsB; ++s) {
      const int f = t + s * kThreads, r = f / (BN / 4), c = (f % (BN / 4)) * 4;
      __pipeline_memcpy_async(&Bs[stage][r][c], B + static_cast<std::size_t>(k0 + r) * N + block_col + c, 16);
    }
    __pipeline_commit();
  };

  float acc[TM][TN] = {};
  const int tiles = K / BK;
  issue(0, 0);
  for (int tile = 0; tile < tiles; ++tile) {
    const int cur = tile & 1;
    if (tile + 1 < tiles) {
      issue(cur ^ 1, (tile + 1) * BK);  // the stage the last step finished reading
      __pipeline_wait_prior(2);         // wrong: this tile's batch may still be pending
    } else {
      __pipeline_wait_prior(1);  // wrong: the last tile's batch may still be pending
    }
    __syncthreads();  // every thread's copies of this tile are visible
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int p = 0; p < TM / 4; ++p) {
        const float4 v = *reinterpret_cast<const float4*>(&As[cur][k][row0 + p * kStepM]);
        a[4 * p] = v.x, a[4 * p + 1] = v.y, a[4 * p + 2] = v.z, a[4 * p + 3] = v.w;
      }
#pragma unroll
      for (int p = 0; p < TN / 4; ++p) {
        const float4 v = *reinterpret_cast<const float4*>(&Bs[cur][k][col0 + p * kStepN]);
        b[4 * p] = v.x, b[4 * p + 1] = v.y, b[4 * p + 2] = v.z, b[4 * p + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();  // everyone is done with stage cur before the next step's copies refill it
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = block_row + row0 + (i / 4) * kStepM + i % 4;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      float* c = C + static_cast<std::size_t>(row) * N + block_col + col0 + (j / 4) * kStepN;
      float4 out = make_float4(alpha * acc[i][j], alpha * acc[i][j + 1], alpha * acc[i][j + 2], alpha * acc[i][j + 3]);
      if (beta != 0.0f) {
        const float4 old = *reinterpret_cast<const float4*>(c);
        out.x += beta * old.x, out.y += beta * old.y, out.z += beta * old.z, out.w += beta * old.w;
      }
      *reinterpret_cast<float4*>(c) = out;
    }
  }
}

// Any size: 32 x 32 tiles of C, 32 x 8 threads with 4 outputs each, zeros outside the matrices.
constexpr int kEdgeTile = 32, kEdgeRows = 8;

__global__ void sgemm_checked(int M, int N, int K, float alpha, const float* __restrict__ A,
                              const float* __restrict__ B, float beta, float* __restrict__ C) {
  __shared__ float as[kEdgeTile][kEdgeTile + 1], bs[kEdgeTile][kEdgeTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row_base = blockIdx.y * kEdgeTile, col = blockIdx.x * kEdgeTile + tx;
  float acc[kEdgeTile / kEdgeRows] = {};
  for (int k0 = 0; k0 < K; k0 += kEdgeTile) {
    for (int r = ty; r < kEdgeTile; r += kEdgeRows) {
      const int ar = row_base + r, ak = k0 + tx, bk = k0 + r;
      as[r][tx] = ar < M && ak < K ? A[static_cast<std::size_t>(ar) * K + ak] : 0.0f;
      bs[r][tx] = bk < K && col < N ? B[static_cast<std::size_t>(bk) * N + col] : 0.0f;
    }
    __syncthreads();
    for (int k = 0; k < kEdgeTile; ++k)
#pragma unroll
      for (int q = 0; q < kEdgeTile / kEdgeRows; ++q) acc[q] += as[ty + q * kEdgeRows][k] * bs[k][tx];
    __syncthreads();
  }
#pragma unroll
  for (int q = 0; q < kEdgeTile / kEdgeRows; ++q) {
    const int row = row_base + ty + q * kEdgeRows;
    if (row < M && col < N) {
      float* c = C + static_cast<std::size_t>(row) * N + col;
      *c = beta == 0.0f ? alpha * acc[q] : alpha * acc[q] + beta * *c;
    }
  }
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0; }

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  if (M % BM == 0 && N % BN == 0 && K % BK == 0 && aligned16(A) && aligned16(B) && aligned16(C)) {
    sgemm_tiles<<<dim3(N / BN, M / BM), kThreads>>>(M, N, K, alpha, A, B, beta, C);
  } else {
    const dim3 grid((N + kEdgeTile - 1) / kEdgeTile, (M + kEdgeTile - 1) / kEdgeTile);
    sgemm_checked<<<grid, dim3(kEdgeTile, kEdgeRows)>>>(M, N, K, alpha, A, B, beta, C);
  }
}
