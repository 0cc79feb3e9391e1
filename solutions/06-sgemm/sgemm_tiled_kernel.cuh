// solutions/06-sgemm/sgemm_tiled_kernel.cuh - the reference SGEMM kernel, as a template over
// its tile sizes, so that the tuning program (bench/sgemm_tune.cu) can time many shapes and
// the reference (sgemm.cu) can use the one that won on the H200.
//
// It is step 09 of the ladder (steps/09_warp_tiling.cu) with every size a parameter, plus:
//   * two checked variants for sizes that are not tile multiples, both filling the tile with
//     zeros outside the matrix and guarding their stores (same arithmetic, so the same results):
//     when every row of A, B and C starts 16-byte aligned (K and N multiples of 4, aligned
//     pointers) each float4 is wholly inside the matrix or wholly outside, so the loads and
//     stores stay float4s, each under one predicate; otherwise scalar loads, each checked;
//   * a grouped tile order: consecutive blocks walk down `raster_rows` tile rows before moving
//     one tile column right, so that the blocks resident at one time share A and B panels in
//     the L2 cache (a runtime argument, tuned with the tile shape; on the H200 it moved the
//     time by less than 0.5%: DRAM throughput stays near 3% of peak, the L2 serves the rest).
//
// Plain FP32 FMAs from CUDA C++ (no tensor cores, no inline PTX); compiles for nvcc, hipcc and
// the emulator. Threads are laid out in groups of 32 (warps on NVIDIA); the grouping is a
// layout choice only, so the kernel is correct for any warpSize.
#pragma once

#include <cstddef>

#include "gpulab/gpu.hpp"

namespace sgemm_ref {

/// Threads per warp tile. A layout constant, not an assumption about warpSize: no warp
/// intrinsic is used, so any warpSize gives the same results.
constexpr int kGroup = 32;

/// A block computes BM x BN of C, walking K in steps of BK. The block's threads form groups
/// of 32, each owning a WM x WN rectangle; each thread owns TM x TN outputs, split into 4 x 4
/// pieces spread over its group's rectangle. MinBlocks goes to __launch_bounds__ (it caps the
/// registers per thread at 65536 / (threads * MinBlocks)).
template <int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_, int MinBlocks_>
struct TileConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, TM = TM_, TN = TN_;
  static constexpr int kMinBlocks = MinBlocks_;
  static constexpr int kGroupsM = BM / WM, kGroupsN = BN / WN;
  static constexpr int kThreads = kGroupsM * kGroupsN * kGroup;
  static constexpr int kLanesN = WN / TN;        // lanes of a group along N
  static constexpr int kStepM = WM / (TM / 4);   // distance between a thread's 4-row pieces
  static constexpr int kStepN = WN / (TN / 4);   // distance between its 4-column pieces
  // 4 floats of padding per row of the transposed A tile: the lanes of a warp that store
  // k and k + 4 land 16 banks apart (see steps/07_transposed_a.cu); rows stay 16-byte aligned.
  static constexpr int kLdA = BM + 4;
  static constexpr int kFloat4sA = BM * BK / 4, kFloat4sB = BK * BN / 4;  // per tile
  static constexpr int kLoadsA = (kFloat4sA + kThreads - 1) / kThreads;  // per thread
  static constexpr int kLoadsB = (kFloat4sB + kThreads - 1) / kThreads;
  static constexpr std::size_t kSharedBytes = 2u * BK * (kLdA + BN) * sizeof(float);

  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must tile the block tile");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are made of 4 x 4 pieces");
  static_assert((WM / TM) * (WN / TN) == kGroup, "a warp tile holds 32 threads");
  static_assert(BK % 4 == 0, "A is loaded 4 consecutive k at a time");
  // When a tile has fewer float4s than the block has threads (512 threads, BK = 8), some
  // threads skip the last load slot.
  static constexpr bool kEvenA = kFloat4sA % kThreads == 0;
  static constexpr bool kEvenB = kFloat4sB % kThreads == 0;
  static_assert(kSharedBytes <= 48 * 1024, "static shared memory is limited to 48 KB");
};

/// Maps the linear block index to a tile (tile_m, tile_n): blocks go down `raster_rows` tile
/// rows, then one tile column right; after the last column, the next band of rows.
__device__ inline void tile_of_block(int block, int tiles_m, int tiles_n, int raster_rows,
                                     int& tile_m, int& tile_n) {
  const int per_band = raster_rows * tiles_n;
  const int band = block / per_band;
  const int first_m = band * raster_rows;
  const int rows = min(raster_rows, tiles_m - first_m);  // the last band may be shorter
  const int in_band = block - band * per_band;
  tile_m = first_m + in_band % rows;
  tile_n = in_band / rows;
}

/// How a variant of sgemm_tiled checks the bounds of the matrices.
enum class Bounds {
  kNone,       ///< no checks: M, N, K tile multiples, 16-byte aligned pointers
  kPerFloat4,  ///< K and N multiples of 4, aligned pointers: one predicate per float4
  kPerElement  ///< any size and alignment: one check per element, scalar loads and stores
};

/// C = alpha * A * B + beta * C on the tiles of Cfg. Grid: one block per tile (1-D, ordered
/// by tile_of_block); block: Cfg::kThreads threads. kBounds says what the problem must meet
/// (see Bounds; bounds_for picks the variant).
template <class Cfg, Bounds kBounds>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    sgemm_tiled(int M, int N, int K, float alpha, const float* __restrict__ A,
                const float* __restrict__ B, float beta, float* __restrict__ C,
                int raster_rows) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
  constexpr int kThreads = Cfg::kThreads;
  constexpr bool kVector = kBounds != Bounds::kPerElement;  // float4 loads and stores
  __align__(16) __shared__ float As[2][BK][Cfg::kLdA];  // A tile, transposed: As[k][m]
  __align__(16) __shared__ float Bs[2][BK][BN];         // B tile as in memory: Bs[k][n]

  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  int tile_m, tile_n;
  tile_of_block(static_cast<int>(blockIdx.x), tiles_m, tiles_n, raster_rows, tile_m, tile_n);
  const int block_row = tile_m * BM, block_col = tile_n * BN;

  const int t = static_cast<int>(threadIdx.x);
  const int group = t / kGroup, lane = t % kGroup;
  const int row0 = (group / Cfg::kGroupsN) * Cfg::WM + (lane / Cfg::kLanesN) * 4;
  const int col0 = (group % Cfg::kGroupsN) * Cfg::WN + (lane % Cfg::kLanesN) * 4;

  // The float4s of each tile this thread copies: slot s covers A row a_row[s], k a_k[s]..+3
  // and B row b_row[s], columns b_col[s]..+3 (tile coordinates).
  int a_row[Cfg::kLoadsA], a_k[Cfg::kLoadsA], b_row[Cfg::kLoadsB], b_col[Cfg::kLoadsB];
#pragma unroll
  for (int s = 0; s < Cfg::kLoadsA; ++s) {
    const int f = t + s * kThreads;
    a_row[s] = f / (BK / 4);
    a_k[s] = (f % (BK / 4)) * 4;
  }
#pragma unroll
  for (int s = 0; s < Cfg::kLoadsB; ++s) {
    const int f = t + s * kThreads;
    b_row[s] = f / (BN / 4);
    b_col[s] = (f % (BN / 4)) * 4;
  }
  // Where each slot's float4 starts for k0 = 0; a tile at k0 is k0 floats right in A and k0
  // rows down in B.
  const float* a_src[Cfg::kLoadsA];
  const float* b_src[Cfg::kLoadsB];
#pragma unroll
  for (int s = 0; s < Cfg::kLoadsA; ++s)
    a_src[s] = A + static_cast<std::size_t>(block_row + a_row[s]) * K + a_k[s];
#pragma unroll
  for (int s = 0; s < Cfg::kLoadsB; ++s)
    b_src[s] = B + static_cast<std::size_t>(b_row[s]) * N + block_col + b_col[s];

  float4 a_stage[Cfg::kLoadsA], b_stage[Cfg::kLoadsB];
  // Global -> registers for the tile starting at k0.
  auto load_tile = [&](int k0) {
#pragma unroll
    for (int s = 0; s < Cfg::kLoadsA; ++s) {
      if (!Cfg::kEvenA && t + s * kThreads >= Cfg::kFloat4sA) continue;
      const float* p = a_src[s] + k0;
      const bool in_row = block_row + a_row[s] < M;
      const int k = k0 + a_k[s];
      if (kBounds == Bounds::kNone) {
        a_stage[s] = *reinterpret_cast<const float4*>(p);
      } else if (kVector) {  // K % 4 == 0: k < K means all of k..k+3 are
        a_stage[s] = in_row && k < K ? *reinterpret_cast<const float4*>(p)
                                     : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      } else {  // scalar loads, so any K and alignment work
        a_stage[s].x = in_row && k + 0 < K ? p[0] : 0.0f;
        a_stage[s].y = in_row && k + 1 < K ? p[1] : 0.0f;
        a_stage[s].z = in_row && k + 2 < K ? p[2] : 0.0f;
        a_stage[s].w = in_row && k + 3 < K ? p[3] : 0.0f;
      }
    }
#pragma unroll
    for (int s = 0; s < Cfg::kLoadsB; ++s) {
      if (!Cfg::kEvenB && t + s * kThreads >= Cfg::kFloat4sB) continue;
      const float* p = b_src[s] + static_cast<std::size_t>(k0) * N;
      const bool in_k = k0 + b_row[s] < K;
      const int n = block_col + b_col[s];
      if (kBounds == Bounds::kNone) {
        b_stage[s] = *reinterpret_cast<const float4*>(p);
      } else if (kVector) {  // N % 4 == 0: n < N means all of n..n+3 are
        b_stage[s] = in_k && n < N ? *reinterpret_cast<const float4*>(p)
                                   : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      } else {
        b_stage[s].x = in_k && n + 0 < N ? p[0] : 0.0f;
        b_stage[s].y = in_k && n + 1 < N ? p[1] : 0.0f;
        b_stage[s].z = in_k && n + 2 < N ? p[2] : 0.0f;
        b_stage[s].w = in_k && n + 3 < N ? p[3] : 0.0f;
      }
    }
  };
  // Registers -> shared buffer `buf`; A is transposed on the way.
  auto store_tile = [&](int buf) {
#pragma unroll
    for (int s = 0; s < Cfg::kLoadsA; ++s) {
      if (!Cfg::kEvenA && t + s * kThreads >= Cfg::kFloat4sA) continue;
      As[buf][a_k[s] + 0][a_row[s]] = a_stage[s].x;
      As[buf][a_k[s] + 1][a_row[s]] = a_stage[s].y;
      As[buf][a_k[s] + 2][a_row[s]] = a_stage[s].z;
      As[buf][a_k[s] + 3][a_row[s]] = a_stage[s].w;
    }
#pragma unroll
    for (int s = 0; s < Cfg::kLoadsB; ++s) {
      if (!Cfg::kEvenB && t + s * kThreads >= Cfg::kFloat4sB) continue;
      *reinterpret_cast<float4*>(&Bs[buf][b_row[s]][b_col[s]]) = b_stage[s];
    }
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  const int tiles = (K + BK - 1) / BK;
  load_tile(0);
  store_tile(0);
  __syncthreads();
  for (int tile = 0; tile < tiles; ++tile) {
    const int cur = tile & 1;
    const bool has_next = tile + 1 < tiles;
    if (has_next) load_tile((tile + 1) * BK);  // in flight during this tile's FMAs
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int p = 0; p < TM / 4; ++p) {
        const float4 v =
            *reinterpret_cast<const float4*>(&As[cur][k][row0 + p * Cfg::kStepM]);
        a[4 * p] = v.x, a[4 * p + 1] = v.y, a[4 * p + 2] = v.z, a[4 * p + 3] = v.w;
      }
#pragma unroll
      for (int p = 0; p < TN / 4; ++p) {
        const float4 v =
            *reinterpret_cast<const float4*>(&Bs[cur][k][col0 + p * Cfg::kStepN]);
        b[4 * p] = v.x, b[4 * p + 1] = v.y, b[4 * p + 2] = v.z, b[4 * p + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    if (has_next) store_tile(cur ^ 1);
    __syncthreads();  // buffer cur ^ 1 complete; everyone done reading buffer cur
  }

  // Epilogue: acc[i][j] is C[row0 + (i/4)*kStepM + i%4][col0 + (j/4)*kStepN + j%4] of the
  // block tile. beta == 0: C is not read (it may hold NaN).
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = block_row + row0 + (i / 4) * Cfg::kStepM + i % 4;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int col = block_col + col0 + (j / 4) * Cfg::kStepN;
      float* c = C + static_cast<std::size_t>(row) * N + col;
      if (kVector) {
        // N % 4 == 0 in kPerFloat4: col < N means all of col..col+3 are
        if (kBounds == Bounds::kPerFloat4 && (row >= M || col >= N)) continue;
        float4 out = make_float4(alpha * acc[i][j], alpha * acc[i][j + 1],
                                 alpha * acc[i][j + 2], alpha * acc[i][j + 3]);
        if (beta != 0.0f) {
          const float4 old = *reinterpret_cast<const float4*>(c);
          out.x += beta * old.x, out.y += beta * old.y;
          out.z += beta * old.z, out.w += beta * old.w;
        }
        *reinterpret_cast<float4*>(c) = out;
      } else if (row < M) {
#pragma unroll
        for (int q = 0; q < 4; ++q)
          if (col + q < N)
            c[q] = beta == 0.0f ? alpha * acc[i][j + q] : alpha * acc[i][j + q] + beta * c[q];
      }
    }
  }
}

/// The variant of sgemm_tiled<Cfg, ...> this problem needs: no checks when it is made of whole
/// tiles, float4 checks when its rows start 16-byte aligned, else element checks.
template <class Cfg>
inline Bounds bounds_for(int M, int N, int K, const float* A, const float* B, const float* C) {
  const bool aligned = ((reinterpret_cast<unsigned long long>(A) |
                         reinterpret_cast<unsigned long long>(B) |
                         reinterpret_cast<unsigned long long>(C)) & 15) == 0;
  if (!aligned || K % 4 != 0 || N % 4 != 0) return Bounds::kPerElement;
  if (M % Cfg::BM == 0 && N % Cfg::BN == 0 && K % Cfg::BK == 0) return Bounds::kNone;
  return Bounds::kPerFloat4;
}

/// Launches the variant of sgemm_tiled<Cfg, ...> that bounds_for picks. Does not synchronise.
template <class Cfg>
void launch_tiled(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                  float* C, int raster_rows) {
  const int tiles = ((M + Cfg::BM - 1) / Cfg::BM) * ((N + Cfg::BN - 1) / Cfg::BN);
  auto go = [&](auto kernel) {
    gpulab::launch(kernel, tiles, Cfg::kThreads, 0, M, N, K, alpha, A, B, beta, C, raster_rows);
  };
  switch (bounds_for<Cfg>(M, N, K, A, B, C)) {
    case Bounds::kNone: go(sgemm_tiled<Cfg, Bounds::kNone>); break;
    case Bounds::kPerFloat4: go(sgemm_tiled<Cfg, Bounds::kPerFloat4>); break;
    case Bounds::kPerElement: go(sgemm_tiled<Cfg, Bounds::kPerElement>); break;
  }
}

}  // namespace sgemm_ref
