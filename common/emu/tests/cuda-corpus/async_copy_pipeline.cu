// Asynchronous copies to shared memory with CUDA's pipeline primitives (<cuda_pipeline.h>, the
// cp.async of sm_80): a tiled matrix product whose next tiles are copied while the current ones
// are used (two stages, __pipeline_wait_prior(1)), 16-byte copies with the matrix's ragged edge
// zero-filled (zfill); row sums staged through 4-byte copies in one batch; and chunk sums staged
// by a block's collective copy (cooperative groups), from aligned and misaligned sources, with
// byte counts that are not multiples of 16. Integer-valued floats, so the checks are exact.
// Covers: __pipeline_memcpy_async (4 and 16 bytes, zfill), __pipeline_commit,
// __pipeline_wait_prior(0 and 1), __syncthreads after the wait; cooperative_groups::memcpy_async,
// cooperative_groups::wait.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK(call)                                                                         \
  do {                                                                                      \
    const cudaError_t err_ = (call);                                                        \
    if (err_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                    \
                   cudaGetErrorString(err_));                                               \
      std::exit(2);                                                                         \
    }                                                                                       \
  } while (0)

constexpr int kTile = 32;  // C tile kTile x kTile, 256 threads with 4 outputs each

// C = A * B, A M x K, B K x N, row-major; K and N multiples of 4 (16-byte rows), any M.
// Tiles of A (kTile x kTile) and B (kTile x kTile) in two stages.
__global__ void matmul_pipelined(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                 int M, int N, int K) {
  __shared__ __align__(16) float as[2][kTile][kTile];
  __shared__ __align__(16) float bs[2][kTile][kTile];
  const int t = threadIdx.x;  // 256 threads
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  // Each thread copies one float4 of each tile: row t / 8, columns (t % 8) * 4 .. + 3.
  const int r = t / 8, c4 = (t % 8) * 4;
  auto issue = [&](int stage, int k0) {
    const bool a_in = row0 + r < M && k0 + c4 < K;  // K % 4 == 0: a float4 is all in or all out
    const float* a_src = a_in ? A + static_cast<long long>(row0 + r) * K + k0 + c4 : A;
    __pipeline_memcpy_async(&as[stage][r][c4], a_src, 16, a_in ? 0 : 16);
    const bool b_in = k0 + r < K && col0 + c4 < N;
    const float* b_src = b_in ? B + static_cast<long long>(k0 + r) * N + col0 + c4 : B;
    __pipeline_memcpy_async(&bs[stage][r][c4], b_src, 16, b_in ? 0 : 16);
    __pipeline_commit();
  };
  float acc[4] = {0, 0, 0, 0};
  const int tiles = (K + kTile - 1) / kTile;
  issue(0, 0);
  for (int tile = 0; tile < tiles; ++tile) {
    const int cur = tile & 1;
    if (tile + 1 < tiles) {
      issue(cur ^ 1, (tile + 1) * kTile);
      __pipeline_wait_prior(1);  // this tile's batch is done; the next one may still be in flight
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();
    // Thread t: column t % 32, rows t / 32 + 8 q.
    for (int k = 0; k < kTile; ++k)
      for (int q = 0; q < 4; ++q) acc[q] += as[cur][t / 32 + 8 * q][k] * bs[cur][k][t % 32];
    __syncthreads();  // the stage is overwritten by the copies issued at the next step
  }
  for (int q = 0; q < 4; ++q) {
    const int row = row0 + t / 32 + 8 * q, col = col0 + t % 32;
    if (row < M && col < N) C[static_cast<long long>(row) * N + col] = acc[q];
  }
}

// One block per row: the row is staged with 4-byte copies in one batch, then summed by thread 0.
__global__ void row_sums_staged(const float* __restrict__ m, float* __restrict__ sums, int cols) {
  extern __shared__ float row[];
  const float* src = m + static_cast<long long>(blockIdx.x) * cols;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) __pipeline_memcpy_async(&row[c], &src[c], 4);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int c = 0; c < cols; ++c) s += row[c];
    sums[blockIdx.x] = s;
  }
}

namespace cg = cooperative_groups;

// Block b sums `len` floats starting at in + offset + b * len, staged by the block's collective
// copy; `len` * 4 bytes need not be a multiple of 16, nor the source 16-byte aligned.
__global__ void chunk_sums_cg(const float* __restrict__ in, float* __restrict__ sums, int offset, int len) {
  extern __shared__ float chunk[];
  cg::thread_block block = cg::this_thread_block();
  cg::memcpy_async(block, chunk, in + offset + static_cast<long long>(blockIdx.x) * len, sizeof(float) * len);
  cg::wait(block);
  if (block.thread_rank() == 0) {
    float s = 0;
    for (int k = 0; k < len; ++k) s += chunk[k];
    sums[blockIdx.x] = s;
  }
}

int main() {
  CHECK(cudaSetDevice(0));
  const int M = 100, N = 72, K = 92;  // none a multiple of the tile
  std::mt19937 gen(11);
  std::vector<float> a(M * K), b(K * N), c(M * N);
  for (auto& v : a) v = static_cast<float>(static_cast<int>(gen() % 7) - 3);
  for (auto& v : b) v = static_cast<float>(static_cast<int>(gen() % 5) - 2);
  float *dA, *dB, *dC;
  CHECK(cudaMalloc(&dA, a.size() * sizeof(float)));
  CHECK(cudaMalloc(&dB, b.size() * sizeof(float)));
  CHECK(cudaMalloc(&dC, c.size() * sizeof(float)));
  CHECK(cudaMemcpy(dA, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dB, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dC, 0xFF, c.size() * sizeof(float)));
  matmul_pipelined<<<dim3((N + kTile - 1) / kTile, (M + kTile - 1) / kTile), 256>>>(dA, dB, dC, M, N, K);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(c.data(), dC, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float want = 0;
      for (int k = 0; k < K; ++k) want += a[i * K + k] * b[k * N + j];
      bad += c[i * N + j] != want;
    }
  std::printf("VERSION matmul_two_stage_zfill %s %ld wrong elements\n", bad ? "FAIL" : "PASS", bad);

  const int rows = 37, cols = 300;
  std::vector<float> m(rows * cols), sums(rows);
  for (auto& v : m) v = static_cast<float>(gen() % 9);
  float *dM, *dS;
  CHECK(cudaMalloc(&dM, m.size() * sizeof(float)));
  CHECK(cudaMalloc(&dS, rows * sizeof(float)));
  CHECK(cudaMemcpy(dM, m.data(), m.size() * sizeof(float), cudaMemcpyHostToDevice));
  row_sums_staged<<<rows, 128, cols * sizeof(float)>>>(dM, dS, cols);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(sums.data(), dS, rows * sizeof(float), cudaMemcpyDeviceToHost));
  long bad_rows = 0;
  for (int r = 0; r < rows; ++r) {
    float want = 0;
    for (int c2 = 0; c2 < cols; ++c2) want += m[r * cols + c2];
    bad_rows += sums[r] != want;
  }
  std::printf("VERSION row_sums_four_byte_copies %s %ld wrong rows\n", bad_rows ? "FAIL" : "PASS", bad_rows);

  // Chunks of 301 floats (1,204 bytes), from the start of the rows (16-byte aligned) and one float
  // in (4-byte aligned only).
  const int chunks = 9, len = 301;
  float* dChunkSums;
  CHECK(cudaMalloc(&dChunkSums, chunks * sizeof(float)));
  long bad_chunks = 0;
  for (int offset = 0; offset <= 1; ++offset) {
    chunk_sums_cg<<<chunks, 128, len * sizeof(float)>>>(dM, dChunkSums, offset, len);
    CHECK(cudaGetLastError());
    std::vector<float> got(chunks);
    CHECK(cudaMemcpy(got.data(), dChunkSums, chunks * sizeof(float), cudaMemcpyDeviceToHost));
    for (int ch = 0; ch < chunks; ++ch) {
      float want = 0;
      for (int k = 0; k < len; ++k) want += m[offset + ch * len + k];
      bad_chunks += got[ch] != want;
    }
  }
  std::printf("VERSION chunk_sums_cg_memcpy_async %s %ld wrong chunks\n", bad_chunks ? "FAIL" : "PASS", bad_chunks);
  CHECK(cudaFree(dChunkSums));
  CHECK(cudaFree(dA));
  CHECK(cudaFree(dB));
  CHECK(cudaFree(dC));
  CHECK(cudaFree(dM));
  CHECK(cudaFree(dS));
  return bad || bad_rows || bad_chunks ? 1 : 0;
}
