// Warp functions of sm_70 and sm_80 in their usual settings: a histogram by warp-aggregated atomics
// (__match_any_sync groups the lanes with the same bin, its lowest lane adds the group's size), a
// per-warp "all the same?" flag (__match_all_sync), and per-warp sums, minima and bit unions
// (__reduce_add/min/or_sync) over the whole warp and over the lanes of a ballot. Exact checks.
// Warp-size independent: masks from __activemask() where the whole warp is present or from a
// ballot; lane counts with __popcll/__ffsll (a 64-lane warp's masks have 64 bits).
// Then stream compaction with cooperative groups' coalesced_threads() inside a divergent branch
// (one atomicAdd per converged group, slots shared out by rank): the slots must be a permutation,
// whatever lanes a GPU happens to converge.
// Covers: __match_any_sync, __match_all_sync, __reduce_add_sync (int and unsigned),
// __reduce_min_sync, __reduce_or_sync, __ballot_sync, __activemask, __popcll, __ffsll;
// cg::coalesced_threads, coalesced_group::size, thread_rank, shfl.
#include <cooperative_groups.h>
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

constexpr int kBins = 64;
constexpr int kThreads = 256;

__global__ void histogram_aggregated(const unsigned* __restrict__ keys, unsigned* bins, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned long long active = __activemask();
  const unsigned key = keys[i];
  const unsigned long long peers = __match_any_sync(active, key);
  const int lane = threadIdx.x % warpSize;
  if (lane == __ffsll(static_cast<long long>(peers)) - 1) atomicAdd(&bins[key], static_cast<unsigned>(__popcll(peers)));
}

// Per warp (its first lane writes): whether all keys / 16 agree, the mask __match_all_sync gave,
// the sum of the keys, the least of -key, and the union of 1 << (key % 32); then the sum of the
// odd keys over the lanes holding one (a ballot's mask).
__global__ void warp_summaries(const unsigned* __restrict__ keys, int n, int* uniform, unsigned long long* all_masks,
                               unsigned* sums, int* minima, unsigned* unions, int* odd_sums) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned long long active = __activemask();
  const unsigned key = keys[i];
  int pred = 0;
  const unsigned long long mask_all = __match_all_sync(active, key / 16u, &pred);
  const unsigned sum = __reduce_add_sync(active, key);
  const int least = __reduce_min_sync(active, -static_cast<int>(key));
  const unsigned bits = __reduce_or_sync(active, 1u << (key % 32u));
  const unsigned long long odd = __ballot_sync(active, key & 1u);
  int odd_sum = 0;
  if (key & 1u) odd_sum = __reduce_add_sync(odd, static_cast<int>(key));
  const int warp = i / warpSize;
  if (i % warpSize == 0) {
    uniform[warp] = pred;
    all_masks[warp] = mask_all;
    sums[warp] = sum;
    minima[warp] = least;
    unions[warp] = bits;
  }
  // The first odd lane of the warp reports the odd lanes' sum (0 when the warp has none).
  if (odd == 0 ? i % warpSize == 0 : (key & 1u) && threadIdx.x % warpSize == __ffsll(static_cast<long long>(odd)) - 1)
    odd_sums[warp] = odd == 0 ? 0 : odd_sum;
}

namespace cg = cooperative_groups;

// Compaction: every key not a multiple of 3 gets a distinct slot in [0, count) (-1 for the rest).
__global__ void compact_coalesced(const unsigned* __restrict__ keys, int n, unsigned* counter, int* slots) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int slot = -1;
  if (keys[i] % 3u != 0u) {
    cg::coalesced_group g = cg::coalesced_threads();
    unsigned first = 0;
    if (g.thread_rank() == 0) first = atomicAdd(counter, g.size());
    slot = static_cast<int>(g.shfl(first, 0) + g.thread_rank());
  }
  slots[i] = slot;
}

int main() {
  CHECK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int ws = prop.warpSize;
  const int n = 64 * 200 + 37;  // the last warp is partial
  std::vector<unsigned> keys(n);
  std::mt19937 gen(2026);
  for (int i = 0; i < n; ++i) {
    // Runs of equal keys (collisions in a warp), some warps of one key / 16, the rest random.
    const int warp = i / 64;
    keys[i] = warp % 3 == 0 ? 16u * (warp % 4) + gen() % 16u : warp % 3 == 1 ? (gen() % 4u) * 7u : gen() % kBins;
  }
  const int warps = (n + ws - 1) / ws;
  unsigned *d_keys, *d_bins, *d_sums, *d_unions;
  int *d_uniform, *d_minima, *d_odd;
  unsigned long long* d_masks;
  CHECK(cudaMalloc(&d_keys, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_bins, kBins * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_sums, warps * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_unions, warps * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_uniform, warps * sizeof(int)));
  CHECK(cudaMalloc(&d_minima, warps * sizeof(int)));
  CHECK(cudaMalloc(&d_odd, warps * sizeof(int)));
  CHECK(cudaMalloc(&d_masks, warps * sizeof(unsigned long long)));
  CHECK(cudaMemcpy(d_keys, keys.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_bins, 0, kBins * sizeof(unsigned)));
  const int blocks = (n + kThreads - 1) / kThreads;
  histogram_aggregated<<<blocks, kThreads>>>(d_keys, d_bins, n);
  CHECK(cudaGetLastError());
  warp_summaries<<<blocks, kThreads>>>(d_keys, n, d_uniform, d_masks, d_sums, d_minima, d_unions, d_odd);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());

  std::vector<unsigned> bins(kBins), sums(warps), unions(warps);
  std::vector<int> uniform(warps), minima(warps), odd(warps);
  std::vector<unsigned long long> masks(warps);
  CHECK(cudaMemcpy(bins.data(), d_bins, kBins * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(sums.data(), d_sums, warps * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(unions.data(), d_unions, warps * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(uniform.data(), d_uniform, warps * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(minima.data(), d_minima, warps * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(odd.data(), d_odd, warps * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(masks.data(), d_masks, warps * sizeof(unsigned long long), cudaMemcpyDeviceToHost));

  std::vector<unsigned> want_bins(kBins, 0);
  for (unsigned k : keys) ++want_bins[k];
  long bad_bins = 0;
  for (int b = 0; b < kBins; ++b) bad_bins += bins[b] != want_bins[b];
  std::printf("VERSION match_any_aggregated_atomics %s %ld wrong bins\n", bad_bins ? "FAIL" : "PASS", bad_bins);

  long bad_all = 0, bad_reduce = 0;
  for (int w = 0; w < warps; ++w) {
    const int first = w * ws, last = std::min(n, first + ws);
    bool same = true;
    unsigned sum = 0, bits = 0;
    int least = 0, odd_sum = 0;
    unsigned long long lanes = 0;
    for (int i = first; i < last; ++i) {
      same = same && keys[i] / 16u == keys[first] / 16u;
      sum += keys[i];
      bits |= 1u << (keys[i] % 32u);
      least = i == first ? -static_cast<int>(keys[i]) : std::min(least, -static_cast<int>(keys[i]));
      if (keys[i] & 1u) odd_sum += static_cast<int>(keys[i]);
      lanes |= 1ull << (i - first);
    }
    bad_all += uniform[w] != static_cast<int>(same) || masks[w] != (same ? lanes : 0ull);
    bad_reduce += sums[w] != sum || minima[w] != least || unions[w] != bits || odd[w] != odd_sum;
  }
  std::printf("VERSION match_all_per_warp %s %ld wrong warps\n", bad_all ? "FAIL" : "PASS", bad_all);
  std::printf("VERSION reduce_sync_per_warp %s %ld wrong warps\n", bad_reduce ? "FAIL" : "PASS", bad_reduce);

  unsigned* d_counter;
  int* d_slots;
  CHECK(cudaMalloc(&d_counter, sizeof(unsigned)));
  CHECK(cudaMalloc(&d_slots, n * sizeof(int)));
  CHECK(cudaMemset(d_counter, 0, sizeof(unsigned)));
  compact_coalesced<<<blocks, kThreads>>>(d_keys, n, d_counter, d_slots);
  CHECK(cudaGetLastError());
  unsigned count = 0;
  std::vector<int> slots(n);
  CHECK(cudaMemcpy(&count, d_counter, sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(slots.data(), d_slots, n * sizeof(int), cudaMemcpyDeviceToHost));
  long want_count = 0, bad_slots = 0;
  std::vector<int> seen;
  for (int i = 0; i < n; ++i) {
    const bool kept = keys[i] % 3u != 0u;
    want_count += kept;
    if (kept) seen.push_back(slots[i]);
    else bad_slots += slots[i] != -1;
  }
  std::sort(seen.begin(), seen.end());
  for (std::size_t k = 0; k < seen.size(); ++k) bad_slots += seen[k] != static_cast<int>(k);
  bad_slots += static_cast<long>(count) != want_count;
  std::printf("VERSION compaction_coalesced_group %s %ld wrong slots\n", bad_slots ? "FAIL" : "PASS", bad_slots);
  CHECK(cudaFree(d_counter));
  CHECK(cudaFree(d_slots));
  CHECK(cudaFree(d_keys));
  CHECK(cudaFree(d_bins));
  CHECK(cudaFree(d_sums));
  CHECK(cudaFree(d_unions));
  CHECK(cudaFree(d_uniform));
  CHECK(cudaFree(d_minima));
  CHECK(cudaFree(d_odd));
  CHECK(cudaFree(d_masks));
  return bad_bins || bad_all || bad_reduce || bad_slots ? 1 : 0;
}
