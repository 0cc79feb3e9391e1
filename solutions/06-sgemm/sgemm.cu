// solutions/06-sgemm/sgemm.cu - the reference solution of lab 06 (implements
// labs/06-sgemm/sgemm.hpp).
//
// The kernel is sgemm_tiled_kernel.cuh (warp-tiled, double-buffered, transposed A tile,
// float4 loads; bounds-checked variants for other sizes), with the tile shapes of sgemm_configs.hpp:
// a large one for problems that fill the GPU, a small one for those that do not.
#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "sgemm.hpp"
#include "sgemm_configs.hpp"

namespace {

int multiprocessors() {
  static const int count = gpulab::device_info().multiprocessors;
  return count;
}

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
           float* C) {
  using sgemm_ref::LargeConfig;
  const long long large_tiles = 1ll * ((M + LargeConfig::BM - 1) / LargeConfig::BM) *
                                ((N + LargeConfig::BN - 1) / LargeConfig::BN);
  if (large_tiles >= multiprocessors())
    sgemm_ref::launch_tiled<LargeConfig>(M, N, K, alpha, A, B, beta, C, sgemm_ref::kRasterRows);
  else
    sgemm_ref::launch_tiled<sgemm_ref::SmallConfig>(M, N, K, alpha, A, B, beta, C,
                                                    sgemm_ref::kRasterRows);
}
