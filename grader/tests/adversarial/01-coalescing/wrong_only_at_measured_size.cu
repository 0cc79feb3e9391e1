// Right where correctness is checked, wrong at n = 512 and n = 16384, the sizes of the measured
// run on the emulator and on a GPU (rubric: performance.emu size, sizes). Everywhere a block per
// row sums it cooperatively (coalesced, fast); at those two sizes the blocks skip each row's last
// element, so the sums are wrong exactly where the speed is measured.
// defence: timed-outputs
// expect: lab fail
// expect[emu]: performance fail "measured run"
// expect[cuda]: performance fail "(timed run, n = 16384)"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

// Block per row: the row's first `count` elements, summed by the block's threads.
__global__ void per_row_block(const float* m, float* sums, int n, int count) {
  __shared__ float partial[1024];
  float s = 0.0f;
  for (int c = threadIdx.x; c < count; c += blockDim.x) s += m[static_cast<long long>(blockIdx.x) * n + c];
  partial[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.0f;
    for (unsigned k = 0; k < blockDim.x; ++k) t += partial[k];
    sums[blockIdx.x] = t;
  }
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  const bool measured = n == 512 || n == 16384;
  gpulab::launch(per_row_block, n, 128, 0, m, sums, n, measured ? n - 1 : n);
}
