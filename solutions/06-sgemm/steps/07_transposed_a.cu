// Step 07 - transposed A tile: store the A tile as As[k][m], so that the 8 values of A a
// thread needs for one k are contiguous; pad its rows so that the transposing stores do not
// collide on banks.
//
// Change vs step 06: the float4 a thread loads from a row of A (4 consecutive k) is written
// into 4 rows of As (one per k) at column m. In the inner loop the thread then reads, per k,
// two float4s of A and two of B, and needs only those 16 values at a time.
// Why: in step 06 the compiler served the strided A reads by holding a whole row of As (8 k)
// for each of the thread's 8 rows: 64 extra live registers. Here the kernel needs 106
// registers instead of 149, so 2 blocks (16 warps) fit on an SM instead of 1 (8 warps), and
// while some warps wait for memory others compute. Measured on the H200: +58%, the largest step
// after the first two. (Occupancy, not the number of shared loads, made the difference.)
// Padding: each row of As is 128 + 4 floats. The 32 lanes of a warp store 16 rows m for k and
// 16 for k + 4; unpadded, k and k + 4 are 4 x 128 words apart, a multiple of the 32 banks, so
// pairs of lanes would hit the same bank. With 132-word rows the second half lands 16 banks
// further, and rows stay 16-byte aligned for float4 reads.
#include "gpulab/gpu.hpp"
#include "steps.hpp"

namespace {

constexpr int kBM = 128, kBN = 128, kBK = 8, kTM = 8, kTN = 8;
constexpr int kThreads = (kBM / kTM) * (kBN / kTN);  // 256
constexpr int kPadA = 4;  // floats added to each row of As (see the top comment)

__global__ void __launch_bounds__(kThreads)
    transposed_a_kernel(int /*M: whole tiles*/, int N, int K, float alpha, const float* A,
                        const float* B, float beta, float* C) {
  __align__(16) __shared__ float As[kBK][kBM + kPadA];
  __align__(16) __shared__ float Bs[kBK][kBN];
  const int t = threadIdx.x;
  const int row0 = (t / (kBN / kTN)) * kTM;
  const int col0 = (t % (kBN / kTN)) * kTN;
  const int block_row = blockIdx.y * kBM, block_col = blockIdx.x * kBN;
  A += static_cast<size_t>(block_row) * K;
  B += block_col;
  C += static_cast<size_t>(block_row) * N + block_col;
  const int a_row = t / (kBK / 4), a_k = (t % (kBK / 4)) * 4;
  const int b_row = t / (kBN / 4), b_col = (t % (kBN / 4)) * 4;

  float acc[kTM][kTN] = {};
  for (int k0 = 0; k0 < K; k0 += kBK) {
    const float4 av = *reinterpret_cast<const float4*>(&A[a_row * K + k0 + a_k]);
    As[a_k + 0][a_row] = av.x;  // the transpose happens here, once per element
    As[a_k + 1][a_row] = av.y;
    As[a_k + 2][a_row] = av.z;
    As[a_k + 3][a_row] = av.w;
    *reinterpret_cast<float4*>(&Bs[b_row][b_col]) =
        *reinterpret_cast<const float4*>(&B[(k0 + b_row) * N + b_col]);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float a[kTM], b[kTN];
#pragma unroll
      for (int i = 0; i < kTM; i += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&As[k][row0 + i]);
        a[i] = v.x, a[i + 1] = v.y, a[i + 2] = v.z, a[i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < kTN; j += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&Bs[k][col0 + j]);
        b[j] = v.x, b[j + 1] = v.y, b[j + 2] = v.z, b[j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int j = 0; j < kTN; j += 4) {
      float4* c = reinterpret_cast<float4*>(&C[(row0 + i) * N + col0 + j]);
      float4 out = make_float4(alpha * acc[i][j], alpha * acc[i][j + 1], alpha * acc[i][j + 2],
                               alpha * acc[i][j + 3]);
      if (beta != 0.0f) {
        const float4 old = *c;
        out.x += beta * old.x, out.y += beta * old.y, out.z += beta * old.z, out.w += beta * old.w;
      }
      *c = out;
    }
}

}  // namespace

void sgemm_step07_transposed_a(int M, int N, int K, float alpha, const float* A,
                               const float* B, float beta, float* C) {
  using sgemm_steps::aligned16;
  if (M % kBM != 0 || N % kBN != 0 || K % kBK != 0 || !aligned16(A) || !aligned16(B) ||
      !aligned16(C)) {
    sgemm_step03_smem_tiling(M, N, K, alpha, A, B, beta, C);
    return;
  }
  const dim3 grid(N / kBN, M / kBM);
  gpulab::launch(transposed_a_kernel, grid, kThreads, 0, M, N, K, alpha, A, B, beta, C);
}
