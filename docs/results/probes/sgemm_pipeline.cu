// Lab 06 probe: can a multi-stage cp.async pipeline make the FP32 SGEMM (FFMA only: no tensor
// cores, no TF32) as fast as cuBLAS on the H200? The course's reference (solutions/06-sgemm/
// sgemm_tiled_kernel.cuh: registers -> shared staging, 2 buffers) stops at ~0.96 of cuBLAS at
// 4096^3 and its tile shapes are exhausted (docs/results/sgemm-h200.md). These kernels change the
// structure instead:
//   * global -> shared with cp.async only (LDGSTS: no staging registers), in a ring of STAGES
//     (2, 3 or 4) shared buffers, one commit group per K tile, cp.async.wait_group STAGES-2 and a
//     single __syncthreads per K tile; the copies of a K tile issued all at once at its top
//     (cp:burst) or a slice after each k step's fragment loads (cp:spread);
//   * A, which is row-major (contiguous along k), reaches shared memory in one of three ways:
//     a:t4  transposed (As[k][m], rows padded to BM + 4 floats) by 4-byte cp.async.ca copies, 8
//           lanes on 32 contiguous bytes of a row, 4 rows per instruction, banks 4k + m all different;
//     a:t4s transposed, unpadded, XOR-swizzled (As[k][m ^ s(k)]), min(BK, 32) lanes of a copy on
//           one row (sgemm_pipe's kSwz);
//     a:mk  as it is (As[m][k], rows padded to BK + 4) by 16-byte copies, the compute loop reading
//           4 k's of a row per float4 (sgemm_pipe_mk; a:mk1 without double-buffering those);
//     B is always copied as it is (Bs[k][n]) by 16-byte cp.async.cg copies;
//   * warp tiles WM x WN; each thread owns TM x TN outputs as 4 x 4 pieces spread over its warp's
//     tile (float4 shared loads, one wavefront each);
//   * register double buffering of the fragments: those of k + 1 (and, at the last k of a K tile,
//     k = 0 of the next, after that tile's wait and barrier) are loaded before the FFMAs of k;
//   * blocks ordered in bands of `raster` tile rows (consecutive blocks walk down a band before
//     moving one tile column right) so that resident blocks share A and B panels in the L2.
// Two diagnostics, not valid sgemm implementations of the contract: a:A^T-given (the a:t4 kernel
// fed A^T made beforehand, untimed, copied by 16-byte copies like B: what the A path costs) and
// a:transpose+gemm (a transpose into a scratch buffer inside the timed region, then that kernel).
// An edge variant of every kernel ([edge]) zero-fills copies outside the matrix (cp.async's
// src-size operand) and guards the stores: any M, N % 4 == 0 (and K % 4 == 0 for a:mk), 16-byte
// aligned pointers; its blocks whose tile lies inside C copy unchecked but for a partial last K tile.
//
// Sizes 2048^3, 4096^3, 4000^3 (row-major C = alpha * A * B + beta * C, the contract of
// labs/06-sgemm/sgemm.hpp); cuBLAS (cublasSgemm, CUBLAS_DEFAULT_MATH, NVIDIA_TF32_OVERRIDE=0,
// the row-major product as C^T = B^T A^T) in the same process. Timing: one warm-up launch, then
// the median of 30 launches, each between two CUDA events and each preceded (outside the events)
// by a write of a buffer twice the L2's size, as the course's benchmarks time (cold L2). The
// whole table three times (rounds), so that the noise shows. About 50 s on an H200.
// Correctness: the timed launches (alpha 1, beta 0) write a C filled with NaN beforehand; that C
// is compared with cuBLAS's: max over rows of max_j |C - Cref| / max_j |Cref| (error relative to
// the row's magnitude), FAIL above 1e-3 or on any NaN/Inf. In round 1 each variant also runs once
// with alpha 0.75, beta 0.5 on a random C, checked the same way against cuBLAS on the same C.
// First lines: each kernel's registers, spill bytes, shared memory and blocks per SM, as the
// runtime reports them.
//
// Measured on an H200 (2026-12-04, queue phase probe06p: 98 s with the build; three rounds within
// 0.3%): every variant correct; none valid for the contract reached cuBLAS. At 4096^3 (cuBLAS
// 51.37 TFLOP/s) the best were a:t4 128x128x32 w32x64 t8x8 s3 cp:burst 0.957-0.959, a:t4s
// 128x256x16 w64x64 t8x16 s3 cp:spread 0.943-0.945, a:t4 128x128x16 w64x64 t8x16 s3 cp:spread
// 0.937-0.939 (the reference: 0.958); the diagnostics a:A^T-given 0.995-0.998 (1.000 at 2048^3)
// and a:transpose+gemm 0.980-0.982: the pipelined compute loop matches cuBLAS's, the 4-byte
// transposing copies of A cost 5-7% (Nsight Compute, 128x128x8 t8x16: ~4 extra shared wavefronts
// per copy instruction, short-scoreboard stalls 0.31 per issue against 0.09 with A^T given).
// a:mk 0.79-0.89 (255 registers, dispatch stalls). At 4000^3 the edge kernels lose 5-25% more.
//   nvcc -O3 -std=c++17 -arch=sm_90 docs/results/probes/sgemm_pipeline.cu -lcublas -o sgemm_pipeline
//   ./sgemm_pipeline   (TSV: round, size, variant, threads, smem KB, ms, TFLOP/s, / cuBLAS, error, ok)
//   PROBE_QUICK=4096 ./sgemm_pipeline   (one size, one round, one timed launch each: for a profiler)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "event_timer.hpp"

namespace {

// ---- cp.async (sm_80+) -----------------------------------------------------------------------
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async4(unsigned dst, const float* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(__cvta_generic_to_global(src))
               : "memory");
}
// Copies 4 bytes when `valid`, else writes 4 zero bytes and reads nothing (src-size 0).
__device__ __forceinline__ void cp_async4_zfill(unsigned dst, const float* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst),
               "l"(__cvta_generic_to_global(src)), "r"(valid ? 4 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async16(unsigned dst, const float* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(__cvta_generic_to_global(src))
               : "memory");
}
__device__ __forceinline__ void cp_async16_zfill(unsigned dst, const float* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(__cvta_generic_to_global(src)), "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// ---- the kernel --------------------------------------------------------------------------------
/// Block tile BM x BN, K tile BK, warp tile WM x WN, thread tile TM x TN (4 x 4 pieces), STAGES
/// shared buffers, MINB blocks per SM for __launch_bounds__.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_, int STAGES_, int MINB_>
struct Cfg {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, TM = TM_, TN = TN_;
  static constexpr int kStages = STAGES_, kMinBlocks = MINB_;
  static constexpr int kWarpsN = BN / WN, kWarps = (BM / WM) * (BN / WN), kThreads = 32 * kWarps;
  static constexpr int kLanesN = WN / TN;       // lanes of a warp along N
  static constexpr int kStepM = WM / (TM / 4);  // distance between a thread's 4-row pieces
  static constexpr int kStepN = WN / (TN / 4);  // distance between its 4-column pieces
  static constexpr int kLdA = BM + 4;           // transposed A row: 4 (mod 32) banks apart per k
  static constexpr int kLdB = BN;
  static constexpr int kStageFloats = BK * kLdA + BK * kLdB;
  static constexpr int kSmemBytes = kStages * kStageFloats * 4;
  static constexpr int kRowsPerPassA = kThreads / 8;          // A rows one pass of 4-byte copies covers
  static constexpr int kCopiesA = BM * BK / kThreads;         // 4-byte copies per thread per K tile
  static constexpr int kChunksB = BN / 4;                     // 16-byte chunks per B row
  static constexpr int kRowsPerPassB = kThreads / kChunksB;   // B rows one pass covers
  static constexpr int kCopiesB = BK * BN / 4 / kThreads;     // 16-byte copies per thread per K tile
  // The same for A^T (the kAT diagnostic): 16-byte chunks per row of the A^T tile (whether they
  // tile it is asserted where it is used).
  static constexpr int kChunksAT = BM / 4;

  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must tile the block tile");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are made of 4 x 4 pieces");
  static_assert((WM / TM) * (WN / TN) == 32, "a warp tile holds 32 threads");
  static_assert(BK % 8 == 0, "A is copied in runs of 8 consecutive k");
  static_assert(BM % 32 == 0, "kLdA = 4 (mod 32) keeps the transposing copies conflict-free");
  static_assert(BM % kRowsPerPassA == 0 && (BM * BK) % kThreads == 0, "A copies must tile the A tile");
  static_assert(kThreads % kChunksB == 0 && BK % kRowsPerPassB == 0, "B copies must tile the B tile");
  static_assert(kStages >= 2 && kStages <= 8, "2..8 stages");
  static_assert(kStepM >= 4 && kStepN >= 4 && kCopiesA >= 1 && kCopiesB >= 1 && kChunksAT >= 1, "tile sizes");
};

/// C = alpha * A * B + beta * C; grid: one block per tile (1-D, in bands of `raster` tile rows);
/// block: Cfg::kThreads; dynamic shared memory: Cfg::kSmemBytes. kCheck = false needs M % BM ==
/// N % BN == K % BK == 0; both need N % 4 == 0 and 16-byte aligned A, B, C, and M * K, K * N,
/// M * N < 2^31 (32-bit element offsets). kAT (a diagnostic): `A` holds A^T (K x M, row-major),
/// copied into As[k][m] by 16-byte copies like B (needs M % 4 == 0 too).
/// kSwz: the transposed A tile unpadded (rows of BM floats) and XOR-swizzled instead: element
/// (k, m) at As[k][m ^ s(k)], s(k) = (k % kL) << log2(32 / kL), where kL = min(BK, 32) lanes of a
/// copy instruction walk k along one row of A (32 / kL rows per instruction, 4 * kL contiguous
/// bytes each: for BK = 32, one 128-byte line per instruction). The 32 lanes' banks m ^ s(k) are
/// all different. A float4 read of rows m0..m0+3 (m0 % 4 == 0) at k finds them in the aligned
/// float4 at m0 ^ (s(k) & ~3), permuted by s(k) & 3, which is undone at compile time.
template <class C, bool kCheck, bool kAT, bool kSpread, bool kSwz = false>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks)
    sgemm_pipe(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
               float beta, float* __restrict__ Cm, int raster) {
  constexpr int BM = C::BM, BN = C::BN, BK = C::BK, TM = C::TM, TN = C::TN, S = C::kStages;
  static_assert(!(kSwz && kAT), "the swizzle permutes inside 16-byte words: 4-byte copies only");
  constexpr int kLdA = kSwz ? BM : C::kLdA, kStageFloats = BK * kLdA + BK * C::kLdB;
  constexpr int kL = kSwz ? (BK < 32 ? BK : 32) : 8;  // lanes of one A copy instruction along k
  constexpr int kSh = kL == 32 ? 0 : kL == 16 ? 1 : 2;  // s(k) = (k % kL) << kSh
  constexpr int kRowsPerPassA = C::kThreads / kL;
  static_assert(kL == 8 || kL == 16 || kL == 32, "BK of 8, 16 or >= 32");
  static_assert(BM % kRowsPerPassA == 0 && BK % kL == 0, "A copies must tile the A tile");
  extern __shared__ __align__(16) float smem[];

  // Tile of this block: bands of `raster` tile rows, walked down then right.
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const int bid = static_cast<int>(blockIdx.x);
  const int per_band = raster * tiles_n, band = bid / per_band;
  const int first_m = band * raster, band_rows = min(raster, tiles_m - first_m);
  const int in_band = bid - band * per_band;
  const int block_row = (first_m + in_band % band_rows) * BM, block_col = (in_band / band_rows) * BN;

  const int t = static_cast<int>(threadIdx.x), warp = t / 32, lane = t % 32;
  const int row0 = (warp / C::kWarpsN) * C::WM + (lane / C::kLanesN) * 4;  // in the block tile
  const int col0 = (warp % C::kWarpsN) * C::WN + (lane % C::kLanesN) * 4;

  // A copies: copy i of thread t is k = kh * kL + t % kL, m = t / kL + (i * kRowsPerPassA) % BM,
  // with kh = i * kRowsPerPassA / BM (all compile-time but t's part). Source offsets are relative
  // to A[block_row][k0], shared ones to the stage's base.
  const int a_k = kAT ? t / C::kChunksAT : t % kL, a_m = kAT ? 4 * (t % C::kChunksAT) : t / kL;
  const int a_off = kAT ? a_k * M + block_row + a_m : (block_row + a_m) * K + a_k;  // + k0 (* M) + (i-part)
  const int a_swz = kSwz ? a_k << kSh : 0;  // s(k) of this thread's copies (k % kL == a_k)
  const unsigned a_dst = smem_addr(smem) + 4u * (a_k * kLdA + (kSwz ? 0 : a_m));
  // B copies: copy i of thread t is row t / kChunksB + i * kRowsPerPassB, columns 4 * (t % kChunksB) + 0..3.
  const int b_r = t / C::kChunksB, b_c = 4 * (t % C::kChunksB);
  const int b_off = b_r * N + block_col + b_c;  // + k0 * N + (i-part)
  const unsigned b_dst = smem_addr(smem) + 4u * (BK * kLdA + b_r * C::kLdB + b_c);

  // In the edge variant, a block whose tile lies inside C copies unchecked but for a partial last K tile.
  const bool inside = !kCheck || (block_row + BM <= M && block_col + BN <= N);

  // Copies [first, last) of the tile's list (this thread's A copies, then its B copies); the
  // bounds are compile-time constants wherever this is called (unrolled loops).
  constexpr int kCopiesA = kAT ? BK * BM / 4 / C::kThreads : C::kCopiesA, kCopies = kCopiesA + C::kCopiesB;
  auto load_tile = [&](int tile, int stage, int first = 0, int last = 1 << 30) {
    const int k0 = tile * BK;
    const unsigned stage_bytes = 4u * static_cast<unsigned>(stage * kStageFloats);
    const bool full = !kCheck || (inside && k0 + BK <= K);
    if constexpr (kAT) {
      constexpr int kRowsPerPass = C::kThreads / C::kChunksAT;
#pragma unroll
      for (int i = 0; i < kCopiesA; ++i) {
        if (i < first || i >= last) continue;
        const int r = i * kRowsPerPass;
        const unsigned dst = a_dst + stage_bytes + 4u * (r * kLdA);
        const int off = a_off + (k0 + r) * M;
        if (full) {
          cp_async16(dst, A + off);
        } else {
          const bool ok = k0 + a_k + r < K && block_row + a_m < M;  // M % 4 == 0: whole chunks
          cp_async16_zfill(dst, ok ? A + off : A, ok);
        }
      }
    } else {
#pragma unroll
      for (int i = 0; i < kCopiesA; ++i) {
        if (i < first || i >= last) continue;
        const int kh = i * kRowsPerPassA / BM, dm = (i * kRowsPerPassA) % BM;
        const int m = kSwz ? (a_m + dm) ^ a_swz : dm;  // a_m itself is in a_dst when unswizzled
        const unsigned dst = a_dst + stage_bytes + 4u * (kh * kL * kLdA + m);
        const int off = a_off + dm * K + k0 + kh * kL;
        if (full) {
          cp_async4(dst, A + off);
        } else {
          const bool ok = block_row + a_m + dm < M && k0 + kh * kL + a_k < K;
          cp_async4_zfill(dst, ok ? A + off : A, ok);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < C::kCopiesB; ++i) {
      if (kCopiesA + i < first || kCopiesA + i >= last) continue;
      const int r = i * C::kRowsPerPassB;
      const unsigned dst = b_dst + stage_bytes + 4u * (r * C::kLdB);
      const int off = b_off + (k0 + r) * N;
      if (full) {
        cp_async16(dst, B + off);
      } else {
        const bool ok = k0 + b_r + r < K && block_col + b_c < N;  // N % 4 == 0: whole chunks
        cp_async16_zfill(dst, ok ? B + off : B, ok);
      }
    }
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  float fa[2][TM], fb[2][TN];  // fragments of k (buffer k & 1) and k + 1
  auto load_frag = [&](int buf, const float* stage, int k) {  // k: a constant after unrolling
    const int sk = kSwz ? ((k % kL) << kSh) : 0, c = sk & ~3, q = sk & 3;
    const float* as = stage + k * kLdA;
    const float* bs = stage + BK * kLdA + k * C::kLdB + col0;
#pragma unroll
    for (int p = 0; p < TM / 4; ++p) {
      const float4 v = *reinterpret_cast<const float4*>(as + ((row0 + p * C::kStepM) ^ c));
      fa[buf][4 * p + (0 ^ q)] = v.x, fa[buf][4 * p + (1 ^ q)] = v.y;
      fa[buf][4 * p + (2 ^ q)] = v.z, fa[buf][4 * p + (3 ^ q)] = v.w;
    }
#pragma unroll
    for (int p = 0; p < TN / 4; ++p) {
      const float4 v = *reinterpret_cast<const float4*>(bs + p * C::kStepN);
      fb[buf][4 * p] = v.x, fb[buf][4 * p + 1] = v.y, fb[buf][4 * p + 2] = v.z, fb[buf][4 * p + 3] = v.w;
    }
  };

  const int tiles = (K + BK - 1) / BK;
  // Prologue: tiles 0 .. S-2 in flight, one commit group each (empty groups past the end keep the
  // count uniform: before tile t's wait, S - 1 + t groups were committed, group t holds tile t).
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (s < tiles) load_tile(s, s);
    cp_async_commit();
  }
  cp_async_wait<S - 2>();
  __syncthreads();
  load_frag(0, smem, 0);

  int read_stage = 0, write_stage = S - 1;
  for (int tile = 0; tile < tiles; ++tile) {
    // write_stage held tile - 1, which every thread finished reading before the barrier that
    // ended tile - 1 (or it was never used). kSpread: its copies are issued a slice per k step
    // (after that step's fragment loads), not all at once, so that the warps, which leave the
    // barrier together, do not queue all their copies in front of their shared loads.
    const bool more = tile + S - 1 < tiles;
    if (!kSpread) {
      if (more) load_tile(tile + S - 1, write_stage);
      cp_async_commit();
    }
    const float* stage = smem + read_stage * kStageFloats;
    const int next_stage = read_stage + 1 == S ? 0 : read_stage + 1;
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      if (k + 1 < BK) load_frag((k + 1) & 1, stage, k + 1);
      if (kSpread && more) load_tile(tile + S - 1, write_stage, k * kCopies / BK, (k + 1) * kCopies / BK);
      if (k + 1 == BK) {
        if (kSpread) cp_async_commit();  // the same group count as the burst: one per iteration
        // Tile + 1 landed (this thread's copies: wait_group; everyone's: the barrier), and every
        // thread has read its last fragment of this stage, which the next iteration overwrites.
        cp_async_wait<S - 2>();
        __syncthreads();
        load_frag((k + 1) & 1, smem + next_stage * kStageFloats, 0);  // unused after the last tile
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(fa[k & 1][i], fb[k & 1][j], acc[i][j]);
    }
    read_stage = next_stage;
    write_stage = write_stage + 1 == S ? 0 : write_stage + 1;
  }
  cp_async_wait<0>();  // only empty groups can be left; drain them anyway

  // Epilogue: acc[i][j] is C[row0 + (i/4)*kStepM + i%4][col0 + (j/4)*kStepN + j%4] of the block's
  // tile. beta == 0: C is not read. N % 4 == 0: a float4 of C is wholly inside or outside.
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = block_row + row0 + (i / 4) * C::kStepM + i % 4;
    if (kCheck && row >= M) continue;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int col = block_col + col0 + (j / 4) * C::kStepN;
      if (kCheck && col >= N) continue;
      float4* c = reinterpret_cast<float4*>(Cm + static_cast<size_t>(row) * N + col);
      float4 out = make_float4(alpha * acc[i][j], alpha * acc[i][j + 1], alpha * acc[i][j + 2], alpha * acc[i][j + 3]);
      if (beta != 0.0f) {
        const float4 old = *c;
        out.x = fmaf(beta, old.x, out.x), out.y = fmaf(beta, old.y, out.y);
        out.z = fmaf(beta, old.z, out.z), out.w = fmaf(beta, old.w, out.w);
      }
      *c = out;
    }
  }
}

/// The second A path ("mk"): the A tile kept as it is in memory, As[m][k] with rows padded to
/// BK + 4 floats, filled by 16-byte cp.async.cg copies (8 lanes cover 128 bytes of a row for
/// BK = 32); the compute loop reads A as float4s along k (4 k's of one row per load) and B as
/// float4s along n. Thread rows are lane_m + kLanesM * i (i < TM) inside the warp tile, so the
/// kLanesM lanes of one A load read consecutive rows, whose 16-byte words sit (BK/4 + 1) words
/// apart, an odd number: different banks, one wavefront. Per 4 k a thread issues TM A loads and
/// 4 * TN/4 B loads, as many as the transposed tile. kDbA: the next 4-k chunk of A is loaded into
/// a second register buffer while this one is used (TM * 8 registers; else TM * 4 and the chunk
/// is loaded at its start). Needs K % 4 == 0 (16-byte rows) as well as the first kernel's conditions.
template <class C, bool kCheck, bool kDbA, bool kSpread>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks)
    sgemm_pipe_mk(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
                  float beta, float* __restrict__ Cm, int raster) {
  constexpr int BM = C::BM, BN = C::BN, BK = C::BK, TM = C::TM, TN = C::TN, S = C::kStages;
  constexpr int kLdA = BK + 4, kChunks = BK / 4, kLanesM = C::WM / C::TM;
  constexpr int kStageA = BM * kLdA, kStageFloats = kStageA + BK * C::kLdB;
  constexpr int kRowsPerPassA = C::kThreads / kChunks, kCopiesA = BM * kChunks / C::kThreads;
  static_assert(kChunks % 2 == 0, "BK % 8 == 0: odd word stride between rows, even chunk count");
  static_assert(C::kThreads % kChunks == 0 && BM % kRowsPerPassA == 0 && kCopiesA >= 1, "A copies must tile the A tile");
  extern __shared__ __align__(16) float smem[];

  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const int bid = static_cast<int>(blockIdx.x);
  const int per_band = raster * tiles_n, band = bid / per_band;
  const int first_m = band * raster, band_rows = min(raster, tiles_m - first_m);
  const int in_band = bid - band * per_band;
  const int block_row = (first_m + in_band % band_rows) * BM, block_col = (in_band / band_rows) * BN;

  const int t = static_cast<int>(threadIdx.x), warp = t / 32, lane = t % 32;
  const int arow0 = (warp / C::kWarpsN) * C::WM + lane / C::kLanesN;  // rows arow0 + kLanesM * i
  const int col0 = (warp % C::kWarpsN) * C::WN + (lane % C::kLanesN) * 4;

  // A copies: chunk c = t % kChunks of rows t / kChunks + i * kRowsPerPassA.
  const int a_c = t % kChunks, a_m = t / kChunks;
  const int a_off = (block_row + a_m) * K + 4 * a_c;  // + k0 + i-part
  const unsigned a_dst = smem_addr(smem) + 4u * (a_m * kLdA + 4 * a_c);
  const int b_r = t / C::kChunksB, b_c = 4 * (t % C::kChunksB);
  const int b_off = b_r * N + block_col + b_c;
  const unsigned b_dst = smem_addr(smem) + 4u * (kStageA + b_r * C::kLdB + b_c);
  const bool inside = !kCheck || (block_row + BM <= M && block_col + BN <= N);

  constexpr int kCopies = kCopiesA + C::kCopiesB;
  auto load_tile = [&](int tile, int stage, int first = 0, int last = 1 << 30) {  // as in sgemm_pipe
    const int k0 = tile * BK;
    const unsigned stage_bytes = 4u * static_cast<unsigned>(stage * kStageFloats);
    const bool full = !kCheck || (inside && k0 + BK <= K);
#pragma unroll
    for (int i = 0; i < kCopiesA; ++i) {
      if (i < first || i >= last) continue;
      const int dm = i * kRowsPerPassA;
      const unsigned dst = a_dst + stage_bytes + 4u * (dm * kLdA);
      const int off = a_off + dm * K + k0;
      if (full) {
        cp_async16(dst, A + off);
      } else {
        const bool ok = block_row + a_m + dm < M && k0 + 4 * a_c < K;  // K % 4 == 0: whole chunks
        cp_async16_zfill(dst, ok ? A + off : A, ok);
      }
    }
#pragma unroll
    for (int i = 0; i < C::kCopiesB; ++i) {
      if (kCopiesA + i < first || kCopiesA + i >= last) continue;
      const int r = i * C::kRowsPerPassB;
      const unsigned dst = b_dst + stage_bytes + 4u * (r * C::kLdB);
      const int off = b_off + (k0 + r) * N;
      if (full) {
        cp_async16(dst, B + off);
      } else {
        const bool ok = k0 + b_r + r < K && block_col + b_c < N;
        cp_async16_zfill(dst, ok ? B + off : B, ok);
      }
    }
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  float4 fa[kDbA ? 2 : 1][TM];  // 4 k's of each of the thread's rows
  float fb[2][TN];              // B at k (buffer k & 1) and k + 1
  auto load_a = [&](int buf, const float* stage, int kc) {
#pragma unroll
    for (int i = 0; i < TM; ++i)
      fa[buf][i] = *reinterpret_cast<const float4*>(stage + (arow0 + kLanesM * i) * kLdA + 4 * kc);
  };
  auto load_b = [&](int buf, const float* stage, int k) {
    const float* bs = stage + kStageA + k * C::kLdB + col0;
#pragma unroll
    for (int p = 0; p < TN / 4; ++p) {
      const float4 v = *reinterpret_cast<const float4*>(bs + p * C::kStepN);
      fb[buf][4 * p] = v.x, fb[buf][4 * p + 1] = v.y, fb[buf][4 * p + 2] = v.z, fb[buf][4 * p + 3] = v.w;
    }
  };
  auto part = [](const float4& v, int q) { return q == 0 ? v.x : q == 1 ? v.y : q == 2 ? v.z : v.w; };

  const int tiles = (K + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (s < tiles) load_tile(s, s);
    cp_async_commit();
  }
  cp_async_wait<S - 2>();
  __syncthreads();
  if (kDbA) load_a(0, smem, 0);
  load_b(0, smem, 0);

  int read_stage = 0, write_stage = S - 1;
  for (int tile = 0; tile < tiles; ++tile) {
    const bool more = tile + S - 1 < tiles;
    if (!kSpread) {
      if (more) load_tile(tile + S - 1, write_stage);
      cp_async_commit();
    }
    const float* stage = smem + read_stage * kStageFloats;
    const int next_stage = read_stage + 1 == S ? 0 : read_stage + 1;
#pragma unroll
    for (int kc = 0; kc < kChunks; ++kc) {
      const int abuf = kDbA ? kc & 1 : 0;
      if (!kDbA) load_a(0, stage, kc);  // before the barrier below: kc < kChunks - 1 or the same stage
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int k = 4 * kc + q;
        if (k + 1 < BK) {
          if (kDbA && q == 0 && kc + 1 < kChunks) load_a((kc + 1) & 1, stage, kc + 1);
          load_b((k + 1) & 1, stage, k + 1);
        }
        if (kSpread && more) load_tile(tile + S - 1, write_stage, k * kCopies / BK, (k + 1) * kCopies / BK);
        if (k + 1 == BK) {
          if (kSpread) cp_async_commit();
          // Every read of this stage is done (issued); tile + 1 landed: see sgemm_pipe.
          cp_async_wait<S - 2>();
          __syncthreads();
          const float* next = smem + next_stage * kStageFloats;
          if (kDbA) load_a(0, next, 0);  // kChunks is even: chunk 0 of the next tile uses buffer 0
          load_b((k + 1) & 1, next, 0);
        }
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const float a = part(fa[abuf][i], q);
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a, fb[k & 1][j], acc[i][j]);
        }
      }
    }
    read_stage = next_stage;
    write_stage = write_stage + 1 == S ? 0 : write_stage + 1;
  }
  cp_async_wait<0>();

  // Epilogue: acc[i][j] is C[arow0 + kLanesM * i][col0 + (j/4)*kStepN + j%4] of the block's tile.
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = block_row + arow0 + kLanesM * i;
    if (kCheck && row >= M) continue;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int col = block_col + col0 + (j / 4) * C::kStepN;
      if (kCheck && col >= N) continue;
      float4* c = reinterpret_cast<float4*>(Cm + static_cast<size_t>(row) * N + col);
      float4 out = make_float4(alpha * acc[i][j], alpha * acc[i][j + 1], alpha * acc[i][j + 2], alpha * acc[i][j + 3]);
      if (beta != 0.0f) {
        const float4 old = *c;
        out.x = fmaf(beta, old.x, out.x), out.y = fmaf(beta, old.y, out.y);
        out.z = fmaf(beta, old.z, out.z), out.w = fmaf(beta, old.w, out.w);
      }
      *c = out;
    }
  }
}

// ---- host side ---------------------------------------------------------------------------------
__global__ void fill_kernel(float* p, size_t n, unsigned seed) {  // uniform in [-1, 1), hashed
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (static_cast<unsigned long long>(seed) << 32);
    x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ull, x ^= x >> 27, x *= 0x94D049BB133111EBull, x ^= x >> 31;
    p[i] = static_cast<float>(x >> 40) * (1.0f / 8388608.0f) - 1.0f;
  }
}

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "cuBLAS error %d in %s\n", static_cast<int>(s), what);
    std::exit(1);
  }
}

/// Row-major C = alpha A B + beta C through column-major cuBLAS: C^T (N x M) = B^T (N x K) A^T (K x M).
void cublas_row_major(cublasHandle_t h, int M, int N, int K, float alpha, const float* A, const float* B,
                      float beta, float* C) {
  check_cublas(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N), "cublasSgemm");
}

struct Problem {
  int M, N, K;
  float *A, *B, *C, *Cref, *C0, *Cref_beta;  // C0: the random C of the beta check
  float *At, *scratch;                        // A^T (K x M), made once; the "transpose first" variants' buffer
};

/// out (cols x rows) = in (rows x cols)^T, 32 x 32 tiles through shared memory (rows padded by one).
__global__ void transpose_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[32][33];
  const int c = blockIdx.x * 32 + threadIdx.x;
  for (int y = threadIdx.y; y < 32; y += 8) {
    const int r = blockIdx.y * 32 + y;
    if (r < rows && c < cols) tile[y][threadIdx.x] = in[static_cast<size_t>(r) * cols + c];
  }
  __syncthreads();
  const int r = blockIdx.y * 32 + threadIdx.x;
  for (int y = threadIdx.y; y < 32; y += 8) {
    const int oc = blockIdx.x * 32 + y;
    if (oc < cols && r < rows) out[static_cast<size_t>(oc) * rows + r] = tile[threadIdx.x][y];
  }
}
void transpose(const float* in, float* out, int rows, int cols) {
  transpose_kernel<<<dim3((cols + 31) / 32, (rows + 31) / 32), dim3(32, 8)>>>(in, out, rows, cols);
}

/// How a variant gets A. kT4: as the contract gives it, by 4-byte transposing copies (sgemm_pipe);
/// kMk / kMk1: as given, by 16-byte copies into an m-major tile (sgemm_pipe_mk, A fragments double
/// or single buffered). Diagnostics: kGivenT, sgemm_pipe fed A^T made beforehand and not timed (not
/// a valid sgemm: it shows what the transposing copies cost); kTransposeFirst, a transpose into a
/// scratch buffer inside the timed region, then that kernel.
enum class AMode { kT4, kT4Swz, kMk, kMk1, kGivenT, kTransposeFirst };

struct Variant {
  std::string name;
  int threads, smem_bytes;
  // Launches the unchecked kernel on tile multiples, else the edge kernel; false if neither fits.
  std::function<bool(const Problem&, float, float, float*, bool* edge)> run;
};

using Kernel = void (*)(int, int, int, float, const float*, const float*, float, float*, int);

void prepare(Kernel k, const std::string& name, bool edge, int threads, int smem) {
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
  cudaFuncAttributes a;
  CHECK(cudaFuncGetAttributes(&a, k));
  int blocks = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, threads, smem));
  std::printf("# resources\t%s%s\tthreads %d\tregs %d\tlocal(spill) %zu B\tsmem %.1f KB\tblocks/SM %d\twarps/SM %d\n",
              name.c_str(), edge ? " [edge]" : "", threads, a.numRegs, a.localSizeBytes, smem / 1024.0, blocks,
              blocks * threads / 32);
}

template <class C, AMode kMode, bool kSpread>
Variant make_variant(std::string name, int raster) {
  constexpr bool kMkMode = kMode == AMode::kMk || kMode == AMode::kMk1;
  constexpr bool kAT = kMode == AMode::kGivenT || kMode == AMode::kTransposeFirst;
  // the m-major tile's shared memory: BM x (BK + 4) for A instead of BK x (BM + 4)
  constexpr bool kSwz = kMode == AMode::kT4Swz;
  constexpr int kSmem = kMkMode ? C::kStages * (C::BM * (C::BK + 4) + C::BK * C::kLdB) * 4
                        : kSwz  ? C::kStages * (C::BM * C::BK + C::BK * C::kLdB) * 4
                                : C::kSmemBytes;
  Kernel fast, edge;
  if constexpr (kMkMode) {
    fast = sgemm_pipe_mk<C, false, kMode == AMode::kMk, kSpread>;
    edge = sgemm_pipe_mk<C, true, kMode == AMode::kMk, kSpread>;
  } else {
    static_assert(!kAT || (C::kThreads % C::kChunksAT == 0 && C::BK % (C::kThreads / C::kChunksAT) == 0),
                  "the A^T copies do not tile this A tile");
    fast = sgemm_pipe<C, false, kAT, kSpread, kSwz>;
    edge = sgemm_pipe<C, true, kAT, kSpread, kSwz>;
  }
  name += kMode == AMode::kT4 ? " a:t4" : kMode == AMode::kT4Swz ? " a:t4s" : kMode == AMode::kMk ? " a:mk" : kMode == AMode::kMk1 ? " a:mk1"
          : kMode == AMode::kGivenT ? " a:A^T-given(diagnostic)" : " a:transpose+gemm";
  name += kSpread ? " cp:spread" : " cp:burst";
  prepare(fast, name, false, C::kThreads, kSmem);
  prepare(edge, name, true, C::kThreads, kSmem);
  Variant v{name, C::kThreads, kSmem, nullptr};
  v.run = [raster, fast, edge](const Problem& p, float alpha, float beta, float* out, bool* is_edge) {
    const int tiles = ((p.M + C::BM - 1) / C::BM) * ((p.N + C::BN - 1) / C::BN);
    *is_edge = !(p.M % C::BM == 0 && p.N % C::BN == 0 && p.K % C::BK == 0);
    // the edge kernels' 16-byte chunks: N % 4 == 0 always, M % 4 (A^T) or K % 4 (mk) too
    if (p.N % 4 != 0 || (kAT && p.M % 4 != 0) || (kMkMode && p.K % 4 != 0)) return false;
    const float* a = p.A;
    if (kMode == AMode::kGivenT) a = p.At;
    if (kMode == AMode::kTransposeFirst) transpose(p.A, p.scratch, p.M, p.K), a = p.scratch;
    (*is_edge ? edge : fast)<<<tiles, C::kThreads, kSmem>>>(p.M, p.N, p.K, alpha, a, p.B, beta, out, raster);
    return true;
  };
  return v;
}

#define VARIANT_MODE(MODE, SPREAD, BM, BN, BK, WM, WN, TM, TN, S, MINB, RASTER)                              \
  make_variant<Cfg<BM, BN, BK, WM, WN, TM, TN, S, MINB>, MODE, SPREAD>(                                     \
      #BM "x" #BN "x" #BK " w" #WM "x" #WN " t" #TM "x" #TN " s" #S " b" #MINB " r" #RASTER, RASTER)
#define T4_BURST(...) VARIANT_MODE(AMode::kT4, false, __VA_ARGS__)
#define T4(...) VARIANT_MODE(AMode::kT4, true, __VA_ARGS__)
#define T4S_BURST(...) VARIANT_MODE(AMode::kT4Swz, false, __VA_ARGS__)
#define T4S(...) VARIANT_MODE(AMode::kT4Swz, true, __VA_ARGS__)
#define MK_BURST(...) VARIANT_MODE(AMode::kMk, false, __VA_ARGS__)
#define MK(...) VARIANT_MODE(AMode::kMk, true, __VA_ARGS__)
#define MK1(...) VARIANT_MODE(AMode::kMk1, true, __VA_ARGS__)

/// max over rows of (max_j |got - ref|) / (max_j |ref|); +inf if anything is not finite.
double row_relative_error(const float* got_d, const float* ref_d, int M, int N) {
  const size_t n = static_cast<size_t>(M) * N;
  std::vector<float> got(n), ref(n);
  CHECK(cudaMemcpy(got.data(), got_d, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(ref.data(), ref_d, n * sizeof(float), cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int i = 0; i < M; ++i) {
    double diff = 0, mag = 0;
    for (int j = 0; j < N; ++j) {
      const float g = got[static_cast<size_t>(i) * N + j], r = ref[static_cast<size_t>(i) * N + j];
      if (!std::isfinite(g)) return INFINITY;
      diff = std::max(diff, std::fabs(static_cast<double>(g) - r));
      mag = std::max(mag, std::fabs(static_cast<double>(r)));
    }
    worst = std::max(worst, diff / std::max(mag, 1e-30));
  }
  return worst;
}

constexpr double kTolerance = 1e-3;
constexpr int kRuns = 30;
constexpr float kAlphaB = 0.75f, kBetaB = 0.5f;  // the beta check's scalars

}  // namespace

int main() {
  setenv("NVIDIA_TF32_OVERRIDE", "0", 1);  // before cuBLAS reads its settings: FP32 FFMA only
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# %s, %d SMs, L2 %d MiB, cc %d.%d\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20,
              prop.major, prop.minor);
  std::printf("# timing: median of %d launches after 1 warm-up, L2 flushed before each (cold L2), CUDA events\n", kRuns);
  std::printf("# check: max over rows of max|C - C_cublas| / max|C_cublas row|, FAIL above %.0e or on NaN/Inf;\n"
              "#        the timed launches (alpha 1, beta 0, C poisoned with NaN before) and, in round 1, alpha %.2f beta %.2f\n",
              kTolerance, kAlphaB, kBetaB);
  std::printf("# name: BMxBNxBK, warp tile w, thread tile t, stages s, min blocks/SM b, raster rows r; [edge] = bounds-checked kernel\n");

  cublasHandle_t handle;
  check_cublas(cublasCreate(&handle), "cublasCreate");
  check_cublas(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");

  // BM, BN, BK, WM, WN, TM, TN, stages, min blocks/SM, raster
  std::vector<Variant> variants = {
      // a:t4 (A tile transposed by 4-byte copies), copies issued all at once at the top of each K
      // tile (cp:burst) ...
      T4_BURST(128, 128, 8, 64, 64, 8, 16, 3, 2, 8),
      T4_BURST(128, 256, 8, 64, 64, 8, 16, 3, 1, 8),
      T4_BURST(128, 128, 32, 32, 64, 8, 8, 3, 2, 8),
      // ... or a slice per k step (cp:spread). 128 threads, 8 x 16 per thread (the reference's
      // shape), 2 blocks per SM:
      T4(128, 128, 8, 64, 64, 8, 16, 2, 2, 8),
      T4(128, 128, 8, 64, 64, 8, 16, 3, 2, 8),
      T4(128, 128, 8, 64, 64, 8, 16, 4, 2, 8),
      T4(128, 128, 16, 64, 64, 8, 16, 3, 2, 8),
      T4(128, 128, 8, 32, 128, 8, 16, 3, 2, 8),
      // 256 threads, 8 x 16 per thread, 1 block per SM (128x256 is cuBLAS's kernel: its 256x128x8,
      // 3 stages, 4x2 warps, in column-major terms):
      T4(128, 256, 8, 64, 64, 8, 16, 3, 1, 8),
      T4(128, 256, 8, 64, 64, 8, 16, 4, 1, 8),
      T4(256, 128, 8, 64, 64, 8, 16, 3, 1, 8),
      // 256 threads, 8 x 8 per thread (<= 128 registers), 2 blocks per SM:
      T4(128, 128, 16, 32, 64, 8, 8, 3, 2, 8),
      T4(128, 128, 32, 32, 64, 8, 8, 3, 2, 8),
      // a:t4s (the transposed A tile swizzled, min(BK, 32) lanes of a copy along k).
      T4S(128, 128, 8, 64, 64, 8, 16, 3, 2, 8),
      T4S(128, 128, 16, 64, 64, 8, 16, 3, 2, 8),
      T4S_BURST(128, 128, 32, 64, 64, 8, 16, 3, 2, 8),
      T4S(128, 256, 16, 64, 64, 8, 16, 3, 1, 8),
      T4S_BURST(128, 128, 32, 32, 64, 8, 8, 3, 2, 8),
      // a:mk (A tile m-major by 16-byte copies, A read along k).
      MK_BURST(128, 128, 8, 64, 64, 8, 16, 3, 2, 8),
      MK(128, 128, 8, 64, 64, 8, 16, 3, 2, 8),
      MK(128, 128, 32, 64, 64, 8, 16, 3, 2, 8),
      MK1(128, 128, 32, 32, 64, 8, 8, 3, 2, 8),
      // Diagnostics.
      VARIANT_MODE(AMode::kGivenT, true, 128, 128, 8, 64, 64, 8, 16, 3, 2, 8),
      VARIANT_MODE(AMode::kTransposeFirst, true, 128, 128, 8, 64, 64, 8, 16, 3, 2, 8),
  };

  // PROBE_QUICK=N (for a profiler): size N only, one round, 1 timed launch per kernel.
  const char* quick = std::getenv("PROBE_QUICK");
  const std::vector<int> sizes = quick ? std::vector<int>{std::atoi(quick)} : std::vector<int>{2048, 4096, 4000};
  const int rounds = quick ? 1 : 3, runs = quick ? 1 : kRuns;
  std::vector<Problem> problems;
  for (const int n : sizes) {
    Problem p{n, n, n, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
    const size_t mk = static_cast<size_t>(p.M) * p.K, kn = static_cast<size_t>(p.K) * p.N, mn = static_cast<size_t>(p.M) * p.N;
    if (mk >= (1ull << 31) || kn >= (1ull << 31) || mn >= (1ull << 31)) {
      std::fprintf(stderr, "size %d too large for 32-bit offsets\n", n);
      return 1;
    }
    CHECK(cudaMalloc(&p.A, mk * 4));
    CHECK(cudaMalloc(&p.B, kn * 4));
    CHECK(cudaMalloc(&p.C, mn * 4));
    CHECK(cudaMalloc(&p.Cref, mn * 4));
    CHECK(cudaMalloc(&p.C0, mn * 4));
    CHECK(cudaMalloc(&p.Cref_beta, mn * 4));
    CHECK(cudaMalloc(&p.At, mk * 4));
    CHECK(cudaMalloc(&p.scratch, mk * 4));
    fill_kernel<<<1024, 256>>>(p.A, mk, 7u + n);
    fill_kernel<<<1024, 256>>>(p.B, kn, 8u + n);
    fill_kernel<<<1024, 256>>>(p.C0, mn, 9u + n);
    transpose(p.A, p.At, p.M, p.K);
    CHECK(cudaGetLastError());
    cublas_row_major(handle, p.M, p.N, p.K, 1.0f, p.A, p.B, 0.0f, p.Cref);
    CHECK(cudaMemcpy(p.Cref_beta, p.C0, mn * 4, cudaMemcpyDeviceToDevice));
    cublas_row_major(handle, p.M, p.N, p.K, kAlphaB, p.A, p.B, kBetaB, p.Cref_beta);
    CHECK(cudaDeviceSynchronize());
    problems.push_back(p);
  }

  const size_t flush_bytes = std::max<size_t>(2 * static_cast<size_t>(prop.l2CacheSize), 64u << 20);
  unsigned char* flush_buf;
  CHECK(cudaMalloc(&flush_buf, flush_bytes));
  int flips = 0;
  auto flush = [&] { CHECK(cudaMemsetAsync(flush_buf, flips++ & 1, flush_bytes)); };

  std::printf("# round\tsize\tvariant\tthreads\tsmem_KB\tms\tTFLOP/s\tof_cublas\terror\tok\n");
  bool all_ok = true;
  for (int round = 1; round <= rounds; ++round) {
    for (const Problem& p : problems) {
      const double flop = 2.0 * p.M * p.N * static_cast<double>(p.K);
      const size_t mn_bytes = static_cast<size_t>(p.M) * p.N * 4;
      CHECK(cudaMemset(p.C, 0xFF, mn_bytes));  // NaN
      const double ref_ms = median_event_ms([&] { cublas_row_major(handle, p.M, p.N, p.K, 1.0f, p.A, p.B, 0.0f, p.C); },
                                            runs, true, flush);
      const double ref_err = row_relative_error(p.C, p.Cref, p.M, p.N);  // cuBLAS against its own first run
      std::printf("%d\t%d\tcuBLAS\t-\t-\t%.4f\t%.2f\t1.000\t%.2e\t%s\n", round, p.M, ref_ms, flop / ref_ms / 1e9, ref_err,
                  ref_err <= kTolerance ? "ok" : "FAIL");
      std::fflush(stdout);
      for (const Variant& v : variants) {
        bool edge = false;
        CHECK(cudaMemset(p.C, 0xFF, mn_bytes));
        if (!v.run(p, 1.0f, 0.0f, p.C, &edge)) {
          std::printf("%d\t%d\t%s\t%d\t%.1f\t-\t-\t-\t-\tskipped (N %% 4 != 0)\n", round, p.M, v.name.c_str(), v.threads,
                      v.smem_bytes / 1024.0);
          continue;
        }
        CHECK(cudaGetLastError());
        const double ms = median_event_ms([&] { v.run(p, 1.0f, 0.0f, p.C, &edge); }, runs, false, flush);
        CHECK(cudaDeviceSynchronize());
        double err = row_relative_error(p.C, p.Cref, p.M, p.N);
        if (round == 1) {  // alpha and beta, on a random C
          CHECK(cudaMemcpy(p.C, p.C0, mn_bytes, cudaMemcpyDeviceToDevice));
          v.run(p, kAlphaB, kBetaB, p.C, &edge);
          CHECK(cudaGetLastError());
          CHECK(cudaDeviceSynchronize());
          const double e2 = row_relative_error(p.C, p.Cref_beta, p.M, p.N);
          err = std::isfinite(e2) ? std::max(err, e2) : INFINITY;
        }
        const bool ok = err <= kTolerance;  // false for NaN/Inf too
        all_ok = all_ok && ok;
        std::printf("%d\t%d\t%s%s\t%d\t%.1f\t%.4f\t%.2f\t%.3f\t%.2e\t%s\n", round, p.M, v.name.c_str(), edge ? " [edge]" : "",
                    v.threads, v.smem_bytes / 1024.0, ms, flop / ms / 1e9, ref_ms / ms, err, ok ? "ok" : "FAIL");
        std::fflush(stdout);
      }
    }
  }
  for (Problem& p : problems)
    for (float* q : {p.A, p.B, p.C, p.Cref, p.C0, p.Cref_beta, p.At, p.scratch}) CHECK(cudaFree(q));
  CHECK(cudaFree(flush_buf));
  cublasDestroy(handle);
  std::printf("# %s\n", all_ok ? "all variants correct" : "SOME VARIANTS FAILED");
  return all_ok ? 0 : 1;
}
