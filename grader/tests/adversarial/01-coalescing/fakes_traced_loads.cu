// Fakes the emulator's access trace: each thread sums its own row (the slow, uncoalesced way) with
// memcpy, which the trace does not see, and then calls the load hook (__sanitizer_cov_load4, its
// name pasted from two tokens so that it does not appear in the text) on the addresses a
// perfectly coalesced kernel would read: the trace shows every float read once, 4 sectors per request.
// On a GPU back-end there is no emulator to fool: the code does not compile there.
// defence: source-text
// expect: lab fail
// expect: correctness fail "tracing hooks"
#include <cstdint>
#include <cstring>

#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

#define GLUE(a, b) a##b
#define LOAD_HOOK GLUE(__sanitizer_c, ov_load4)
extern "C" void LOAD_HOOK(std::uint32_t* address);

namespace {

constexpr int kChunk = 64;

// Thread r sums row r; the warp then "reads" its 32 rows lane by lane, neighbouring lanes
// neighbouring floats, through the hook alone.
__global__ void rows(const float* m, float* sums, int n) {
  const int r = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int lane = static_cast<int>(threadIdx.x) % warpSize;
  const int first = r - lane;
  for (int j = 0; j < warpSize && first + j < n; ++j)
    for (int c = lane; c < n; c += warpSize)
      LOAD_HOOK(reinterpret_cast<std::uint32_t*>(const_cast<float*>(m + static_cast<long long>(first + j) * n + c)));
  if (r >= n) return;
  float s = 0.0f, chunk[kChunk];
  for (int c = 0; c < n; c += kChunk) {
    const int count = n - c < kChunk ? n - c : kChunk;
    std::memcpy(chunk, m + static_cast<long long>(r) * n + c, static_cast<std::size_t>(count) * sizeof(float));
    for (int k = 0; k < count; ++k) s += chunk[k];
  }
  sums[r] = s;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) { gpulab::launch(rows, (n + 127) / 128, 128, 0, m, sums, n); }
