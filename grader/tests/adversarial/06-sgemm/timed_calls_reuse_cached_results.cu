// Computes a product once per set of buffers and sizes and remembers it: a later call on the same
// addresses and sizes copies the remembered C back (a kernel that reads A and B, as a decoy, and
// writes C) instead of multiplying. Every call on fresh buffers is right; timed runs on the same
// buffers cost a copy, not a product, and give a wrong C whenever the buffers hold other matrices
// (the grader's timed runs take turns on two input sets in the same buffers, and its interleaved
// calls reuse buffers for other data). The product itself: the textbook 16 x 16 shared tiles.
// defence[cuda]: timed-runs
// defence[emu]: call-order
// expect: lab fail
// expect[emu]: correctness fail "sgemm on data set B was wrong when called after sgemm on A"
// expect[cuda]: performance fail "did not compute their own result"
#include <map>
#include <tuple>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "sgemm.hpp"

namespace {

constexpr int kTile = 16;

__global__ void sgemm_shared_16(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                                float* C) {
  __shared__ float As[kTile][kTile], Bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int r = blockIdx.y * kTile + ty, c = blockIdx.x * kTile + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    As[ty][tx] = r < M && k0 + tx < K ? A[static_cast<long long>(r) * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = k0 + ty < K && c < N ? B[static_cast<long long>(k0 + ty) * N + c] : 0.0f;
    __syncthreads();
    for (int k = 0; k < kTile; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (r < M && c < N) {
    float& out = C[static_cast<long long>(r) * N + c];
    out = beta == 0.0f ? alpha * acc : alpha * acc + beta * out;
  }
}

__global__ void copy(const float* from, float* to, long long count) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    to[i] = from[i];
}

// Reads every element of A and B (nothing it adds up is kept) and copies the remembered C.
__global__ void replay(const float* A, long long a_count, const float* B, long long b_count, const float* kept,
                       float* C, long long c_count) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  float s = 0.0f;
  for (long long i = first; i < a_count; i += stride) s += A[i];
  for (long long i = first; i < b_count; i += stride) s += B[i];
  for (long long i = first; i < c_count; i += stride) C[i] = s == 3.0e38f ? s : kept[i];
}

using Key = std::tuple<const float*, const float*, float*, int, int, int>;
std::map<Key, float*> memo;

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const long long mk = 1ll * M * K, kn = 1ll * K * N, mn = 1ll * M * N;
  const Key key{A, B, C, M, N, K};
  if (const auto it = memo.find(key); it != memo.end()) {
    gpulab::launch(replay, 264, 256, 0, A, mk, B, kn, it->second, C, mn);
    return;
  }
  const dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  gpulab::launch(sgemm_shared_16, grid, dim3(kTile, kTile), 0, M, N, K, alpha, A, B, beta, C);
  float* kept = static_cast<float*>(gpulab::device_malloc(static_cast<std::size_t>(mn) * sizeof(float)));
  gpulab::launch(copy, 264, 256, 0, C, kept, mn);
  memo[key] = kept;
}
