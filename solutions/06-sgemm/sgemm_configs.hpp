// solutions/06-sgemm/sgemm_configs.hpp - the tile shapes the reference (sgemm.cu) uses, chosen
// by timing every configuration of bench/sgemm_tune.cu on an NVIDIA H200 (the tables of those
// runs are in docs/results/sgemm-h200.md). Shared with the tests, which run both shapes on
// every size.
#pragma once

#include "sgemm_tiled_kernel.cuh"

namespace sgemm_ref {

// Fastest at 4096^3 and 8192^3: blocks of 128 x 128 with 128 threads (4 warps of 64 x 64),
// K tiles of 8, 8 x 16 outputs per thread, 2 blocks per SM (<= 255 registers per thread).
using LargeConfig = TileConfig<128, 128, 8, 64, 64, 8, 16, 2>;

// For problems with fewer 128 x 128 tiles than the GPU has SMs (1024^2 and smaller), where
// most SMs would idle: 64 x 64 tiles make 4x as many blocks; 128 threads with 8 x 4 outputs
// each. Fastest at 1024^3 (79% of cuBLAS there, against 52% for the 128 x 128 tiles).
using SmallConfig = TileConfig<64, 64, 8, 32, 32, 8, 4, 4>;

// Blocks walk down this many tile rows before moving right. Measured to matter little on the
// H200 (within 0.5% from 1 to 32 at 4096^3; the L2 catches nearly all re-reads in any order).
constexpr int kRasterRows = 8;

}  // namespace sgemm_ref
