// Idiom: the tile shape picked by the GPU's multiprocessor count, as the reference does: 128 x 128
// tiles (8 x 8 per thread, BK = 8, double-buffered shared tiles with register prefetch) once they
// give every SM a tile, else 64 x 64 tiles (4 x 4 per thread) for 4x as many blocks. At 4096^3 an
// H200 runs the 128 x 128 kernel; the emulator's measured 256^3 product sees a GPU scaled with it
// (rubric: measured_multiprocessors) and runs the same kernel, so that is the one predicted (the
// 64 x 64 kernel alone is predicted at 0.75 of cuBLAS: shared-memory bound). The run at the other
// warp size sees 132 SMs and checks the 64 x 64 kernel's results.
// expect: lab pass
#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "sgemm.hpp"

namespace {

constexpr int BM = 128, BN = 128, BK = 8;
constexpr int kThreads = 256;
constexpr int kPadA = 4;  // transposed A rows padded: the k and k+4 stores of a warp hit other banks

template <bool kChecked>
__global__ void __launch_bounds__(kThreads, 2)
    sgemm_classic(int M, int N, int K, float alpha, const float* __restrict__ A,
                  const float* __restrict__ B, float beta, float* __restrict__ C) {
  __shared__ __align__(16) float sA[2][BK][BM + kPadA];
  __shared__ __align__(16) float sB[2][BK][BN];

  const int tid = threadIdx.x;
  const int tx = tid % 16, ty = tid / 16;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

  // This thread's share of a tile: one float4 of A (row a_r, k a_k..a_k+3), one of B (k b_r,
  // columns b_c..b_c+3).
  const int a_r = tid >> 1, a_k = (tid & 1) << 2;
  const int b_r = tid >> 5, b_c = (tid & 31) << 2;
  const float* a_ptr = A + static_cast<size_t>(row0 + a_r) * K + a_k;
  const float* b_ptr = B + static_cast<size_t>(b_r) * N + col0 + b_c;

  float4 ra, rb;
  auto fetch = [&](int k0) {
    if (!kChecked) {
      ra = *reinterpret_cast<const float4*>(a_ptr + k0);
      rb = *reinterpret_cast<const float4*>(b_ptr + static_cast<size_t>(k0) * N);
    } else {
      const bool row_ok = row0 + a_r < M;
      const int ka = k0 + a_k;
      const float* pa = a_ptr + k0;
      ra.x = row_ok && ka + 0 < K ? pa[0] : 0.0f;
      ra.y = row_ok && ka + 1 < K ? pa[1] : 0.0f;
      ra.z = row_ok && ka + 2 < K ? pa[2] : 0.0f;
      ra.w = row_ok && ka + 3 < K ? pa[3] : 0.0f;
      const bool k_ok = k0 + b_r < K;
      const int c = col0 + b_c;
      const float* pb = b_ptr + static_cast<size_t>(k0) * N;
      rb.x = k_ok && c + 0 < N ? pb[0] : 0.0f;
      rb.y = k_ok && c + 1 < N ? pb[1] : 0.0f;
      rb.z = k_ok && c + 2 < N ? pb[2] : 0.0f;
      rb.w = k_ok && c + 3 < N ? pb[3] : 0.0f;
    }
  };
  auto stash = [&](int buf) {
    sA[buf][a_k + 0][a_r] = ra.x;
    sA[buf][a_k + 1][a_r] = ra.y;
    sA[buf][a_k + 2][a_r] = ra.z;
    sA[buf][a_k + 3][a_r] = ra.w;
    *reinterpret_cast<float4*>(&sB[buf][b_r][b_c]) = rb;
  };

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  // fragments: fa[s] / fb[s] for two k in flight
  float4 fa[2][2], fb[2][2];
  auto frag = [&](int buf, int k, int s) {
    fa[s][0] = *reinterpret_cast<const float4*>(&sA[buf][k][ty * 4]);
    fa[s][1] = *reinterpret_cast<const float4*>(&sA[buf][k][ty * 4 + 64]);
    fb[s][0] = *reinterpret_cast<const float4*>(&sB[buf][k][tx * 4]);
    fb[s][1] = *reinterpret_cast<const float4*>(&sB[buf][k][tx * 4 + 64]);
  };

  const int ktiles = (K + BK - 1) / BK;
  fetch(0);
  stash(0);
  __syncthreads();
  frag(0, 0, 0);

  for (int t = 0; t < ktiles; ++t) {
    const int buf = t & 1;
    const bool more = t + 1 < ktiles;
    if (more) fetch((t + 1) * BK);
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      if (k + 1 < BK) frag(buf, k + 1, (k + 1) & 1);
      const float a[8] = {fa[k & 1][0].x, fa[k & 1][0].y, fa[k & 1][0].z, fa[k & 1][0].w,
                          fa[k & 1][1].x, fa[k & 1][1].y, fa[k & 1][1].z, fa[k & 1][1].w};
      const float b[8] = {fb[k & 1][0].x, fb[k & 1][0].y, fb[k & 1][0].z, fb[k & 1][0].w,
                          fb[k & 1][1].x, fb[k & 1][1].y, fb[k & 1][1].z, fb[k & 1][1].w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if (more) {
      stash(buf ^ 1);
      __syncthreads();
      frag(buf ^ 1, 0, 0);
    }
  }

  // Epilogue: acc[i][j] -> C[row0 + ty*4 + (i%4) + (i/4)*64][col0 + tx*4 + (j%4) + (j/4)*64]
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int r = row0 + ty * 4 + (i & 3) + (i >> 2) * 64;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int c = col0 + tx * 4 + h * 64;
      float* pc = C + static_cast<size_t>(r) * N + c;
      if (!kChecked) {
        float4 o = make_float4(alpha * acc[i][4 * h], alpha * acc[i][4 * h + 1],
                               alpha * acc[i][4 * h + 2], alpha * acc[i][4 * h + 3]);
        if (beta != 0.0f) {
          const float4 old = *reinterpret_cast<const float4*>(pc);
          o.x = fmaf(beta, old.x, o.x);
          o.y = fmaf(beta, old.y, o.y);
          o.z = fmaf(beta, old.z, o.z);
          o.w = fmaf(beta, old.w, o.w);
        }
        *reinterpret_cast<float4*>(pc) = o;
      } else if (r < M) {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          if (c + q < N) {
            const float v = alpha * acc[i][4 * h + q];
            pc[q] = beta != 0.0f ? fmaf(beta, pc[q], v) : v;
          }
        }
      }
    }
  }
}

constexpr int TILE = 64, BK64 = 16;
constexpr int kLdA = TILE + 4;

template <bool kVec>
__global__ void __launch_bounds__(kThreads)
    sgemm64(int M, int N, int K, float alpha, const float* __restrict__ A,
            const float* __restrict__ B, float beta, float* __restrict__ C) {
  __shared__ __align__(16) float sa[2][BK64][kLdA];
  __shared__ __align__(16) float sb[2][BK64][TILE];
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;

  // A: row tid/4 of the tile, k (tid%4)*4..+3; B: k row tid/16, columns (tid%16)*4..+3
  const int ar = tid >> 2, ak = (tid & 3) << 2;
  const int br = tid >> 4, bc = (tid & 15) << 2;
  const bool a_row_ok = m0 + ar < M;
  const bool b_col_ok = n0 + bc < N;  // with kVec (N % 4 == 0) the whole float4 is in

  float4 ga, gb;
  auto gload = [&](int k0) {
    const float* pa = A + static_cast<size_t>(m0 + ar) * K + k0 + ak;
    const float* pb = B + static_cast<size_t>(k0 + br) * N + n0 + bc;
    if (kVec) {
      ga = a_row_ok && k0 + ak < K ? *reinterpret_cast<const float4*>(pa) : make_float4(0.f, 0.f, 0.f, 0.f);
      gb = b_col_ok && k0 + br < K ? *reinterpret_cast<const float4*>(pb) : make_float4(0.f, 0.f, 0.f, 0.f);
    } else {
      float va[4], vb[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        va[q] = a_row_ok && k0 + ak + q < K ? pa[q] : 0.0f;
        vb[q] = k0 + br < K && n0 + bc + q < N ? pb[q] : 0.0f;
      }
      ga = make_float4(va[0], va[1], va[2], va[3]);
      gb = make_float4(vb[0], vb[1], vb[2], vb[3]);
    }
  };
  auto sstore = [&](int buf) {
    sa[buf][ak + 0][ar] = ga.x;
    sa[buf][ak + 1][ar] = ga.y;
    sa[buf][ak + 2][ar] = ga.z;
    sa[buf][ak + 3][ar] = ga.w;
    *reinterpret_cast<float4*>(&sb[buf][br][bc]) = gb;
  };

  float acc[4][4] = {};
  const int nt = (K + BK64 - 1) / BK64;
  gload(0);
  sstore(0);
  __syncthreads();
  for (int t = 0; t < nt; ++t) {
    const int cur = t & 1;
    if (t + 1 < nt) gload((t + 1) * BK64);
#pragma unroll
    for (int k = 0; k < BK64; ++k) {
      const float4 a = *reinterpret_cast<const float4*>(&sa[cur][k][ty * 4]);
      const float4 b = *reinterpret_cast<const float4*>(&sb[cur][k][tx * 4]);
      const float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    if (t + 1 < nt) sstore(cur ^ 1);
    __syncthreads();
  }

  const int col = n0 + tx * 4;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int row = m0 + ty * 4 + i;
    if (row >= M) break;
    float* pc = C + static_cast<size_t>(row) * N + col;
    if (kVec) {
      if (col >= N) continue;
      float4 o = make_float4(alpha * acc[i][0], alpha * acc[i][1], alpha * acc[i][2], alpha * acc[i][3]);
      if (beta != 0.0f) {
        const float4 c = *reinterpret_cast<const float4*>(pc);
        o = make_float4(o.x + beta * c.x, o.y + beta * c.y, o.z + beta * c.z, o.w + beta * c.w);
      }
      *reinterpret_cast<float4*>(pc) = o;
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (col + j < N) pc[j] = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * pc[j];
    }
  }
}

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
           float* C) {
  const bool aligned = ((reinterpret_cast<std::uintptr_t>(A) | reinterpret_cast<std::uintptr_t>(B) |
                         reinterpret_cast<std::uintptr_t>(C)) & 15u) == 0;
  static const int sms = gpulab::device_info().multiprocessors;
  const long long big_tiles = 1ll * ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
  if (big_tiles >= sms) {
    const dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    const bool whole = M % BM == 0 && N % BN == 0 && K % BK == 0;
    if (aligned && whole)
      gpulab::launch(sgemm_classic<false>, grid, dim3(kThreads), 0, M, N, K, alpha, A, B, beta, C);
    else
      gpulab::launch(sgemm_classic<true>, grid, dim3(kThreads), 0, M, N, K, alpha, A, B, beta, C);
  } else {
    const dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    if (aligned && K % 4 == 0 && N % 4 == 0)
      gpulab::launch(sgemm64<true>, grid, dim3(kThreads), 0, M, N, K, alpha, A, B, beta, C);
    else
      gpulab::launch(sgemm64<false>, grid, dim3(kThreads), 0, M, N, K, alpha, A, B, beta, C);
  }
}
