// Kernels for the block-loop tests (common/emu/passes/twin_pass.cpp): compiled in a traced kernel
// file (test_block_loops.cu) and in a plain C++ file (block_loops_plain.cpp), each with its own
// copy (internal linkage).
#pragma once

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"

namespace {

#if defined(__clang__) || defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

// ---- kernels with a block loop: no barrier, no warp collective, no call ----

/// A thread per element, guarded.
__global__ void bl_affine(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 3.0f * in[i] + 1.0f;
}

/// Every index variable in three dimensions, and threads that return early.
__global__ void bl_three_d(int* out) {
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned per_block = blockDim.x * blockDim.y * blockDim.z;
  if (threadIdx.y == 1 && threadIdx.x == 2) return;
  out[b * per_block + t] = static_cast<int>(t * 1000 + b * 7 + threadIdx.z);
}

/// A local array (each thread's own) and a loop.
__global__ void bl_local_array(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float window[8];
  for (int k = 0; k < 8; ++k) window[k] = in[(i + k) % n] * static_cast<float>(k + 1);
  float s = 0;
  for (int k = 7; k >= 0; --k) s = s * 0.5f + window[k];
  out[i] = s;
}

/// Shared memory without a barrier: each thread its own slot (poisoned before the block).
__global__ void bl_shared_own_slot(const float* in, float* out, int n) {
  __shared__ float slot[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  slot[threadIdx.x] = in[i] * in[i];
  out[i] = slot[threadIdx.x] - 1.0f;
}

/// C math functions, and a product and a sum in one expression (a*b+c: contracted or not, the
/// block loop must round as the threads do).
__global__ void bl_math(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = expf(in[i] * 0.01f) + sqrtf(fabsf(in[i])) * in[i] + 0.1f;
}

/// Guards the block loop may find true (or false) for a whole block, and one it must not: an early
/// return, a lower bound, an unsigned index that wraps past 2^32 inside a block (where `offset` is
/// large: the comparison is then not monotone in the thread), and a decreasing index.
__global__ void bl_guards(const float* in, float* out, int n, unsigned offset, unsigned limit) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = in[i];
  if (i > n / 3) v += 1.0f;
  const unsigned u = blockIdx.x * blockDim.x + threadIdx.x + offset;
  if (u < limit) v *= 2.0f;
  const int j = n - 1 - i;
  if (j < n / 2) v -= 3.0f;
  out[i] = v;
}

/// A store guarded by `u < limit && i < n`, u an unsigned index that may wrap past 2^32 inside
/// every block (where `offset` is large).
__global__ void bl_wrapping_guard(float* out, int n, unsigned offset, unsigned limit) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned u = threadIdx.x + offset;
  if (u < limit && i < n) out[i] = 1.0f + static_cast<float>(i);
}

/// A parameter passed by value in memory (over 16 bytes), written by each thread: every thread
/// has its own copy, also in a block loop.
struct BlTaps {
  float taps[7];
  int n;
};
__global__ void bl_by_value(BlTaps f, const float* in, float* out, int len) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= len) return;
  for (int k = 0; k < f.n; ++k) f.taps[k] *= 0.5f;
  float acc = 0;
  for (int k = 0; k < f.n; ++k) acc += in[(i + k) % len] * f.taps[k];
  out[i] = acc;
}

/// `__restrict__` holds within each thread; the caller passes in == out, so that thread t reads
/// what thread t-1 wrote (a race on a GPU; on the emulator, threads run one after another).
__global__ void bl_restrict_chain(const float* __restrict__ in, float* __restrict__ out, int n) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t + 1 < n) out[t + 1] = in[t] + 1.0f;
}

/// A grid-stride loop.
__global__ void bl_grid_stride(const float* in, float* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = in[i] * 0.5f;
}

// ---- a loop in each thread: the block loop's jam copy may run several threads' loops together ----

/// One thread per element of C = A B (n x n), 2-D blocks: each thread's dot product over k.
/// Launched with c apart from a and b, and with c == a (in place): the jam copy must not run then.
__global__ void bl_dot(const float* a, const float* b, float* c, int n) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n) {
    float sum = 0;
    for (int k = 0; k < n; ++k) sum += a[i * n + k] * b[k * n + j];
    c[i * n + j] = sum;
  }
}

/// Each thread's grid-stride sum, then a barrier, then 8 threads each add up a sixteenth of the
/// block's sums: a barrier kernel whose first phase holds a loop per thread, whose count differs
/// between the threads of a block unless n is a multiple of the grid's threads (and is 0 for the
/// threads at or past n). Its jam copy may run only where every thread of the block counts alike.
__global__ void bl_stride_sum(const float* in, float* out, int n) {
  __shared__ float part[128];
  float s = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += in[i] * 0.5f;
  part[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x < 8) {
    float t = 0;
    for (unsigned k = threadIdx.x; k < blockDim.x; k += 8) t += part[k];
    out[blockIdx.x * 8 + threadIdx.x] = t;
  }
}

/// Grid-stride loops the count check must run as they are, or handle (2-D blocks; out has one
/// element per thread of the grid): two in one thread (no jam then), a bound each row of threads
/// reads from memory (its counter marked not to wrap in passing, then not), and a walk bounded by
/// a pointer.
__device__ inline unsigned bl_first() { return (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x; }
__device__ inline unsigned bl_stride() { return gridDim.x * blockDim.x * blockDim.y; }
__global__ void bl_stride_two(const float* in, const unsigned* lens, float* out, int n) {
  float s = 0, t = 0;
  for (unsigned i = bl_first(); i < static_cast<unsigned>(n); i += bl_stride()) s += in[i];
  for (unsigned i = bl_first(); i < static_cast<unsigned>(n) + lens[0]; i += 2 * bl_stride()) t += in[i % n] * 0.25f;
  out[bl_first()] = s + t;
}
__global__ void bl_stride_bound(const float* in, const unsigned* lens, float* out, int n) {
  float u = 0;
  for (unsigned i = bl_first(); i < lens[threadIdx.y]; i += bl_stride()) u += in[i % static_cast<unsigned>(n)];
  out[bl_first()] = u;
}
__global__ void bl_stride_pointer(const float* in, const unsigned* lens, float* out, int n) {
  float v = static_cast<float>(lens[1]);
  for (const float* p = in + bl_first(); p < in + n; p += bl_stride()) v += *p * 0.5f;
  out[bl_first()] = v;
}

/// Each thread reads elements its neighbours write, through one parameter: run thread after
/// thread, a thread sees what the threads before it stored.
__global__ void bl_reads_neighbours(float* buf, int n, int span) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0;
  for (int k = 1; k <= span; ++k) acc += buf[(i + n - k) % n] * 0.5f;
  buf[i] = acc + 1.0f;
}

/// A local array updated in the inner loop: in the block loop each thread in turn uses the one
/// copy of it, so running two threads' loops together would mix their arrays.
__global__ void bl_local_in_loop(const float* in, float* out, int n, int m) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float bins[4] = {0, 0, 0, 0};
  for (int k = 0; k < m; ++k) bins[(i + k) & 3] += in[(i * 3 + k) % n];
  out[i] = bins[0] - bins[1] + bins[2] * bins[3];
}

/// Output pointers read from memory: the jam copy cannot tell where they point.
__global__ void bl_pointer_table(float* const* outs, const float* in, int n, int m) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0;
  for (int k = 0; k < m; ++k) {
    acc += in[(i + k) % n];
    outs[k % 2][(i + k) % n] = acc;
  }
}

// ---- kernels with barriers: their block loops run the block phase by phase ----

/// A tile through shared memory, 2-D blocks; indices computed before the barrier are used after.
__global__ void bl_tile_transpose(const float* in, float* out, int n) {
  __shared__ float tile[16][17];
  int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
  if (x < n && y < n) tile[threadIdx.y][threadIdx.x] = in[y * n + x];
  __syncthreads();
  const int tx = blockIdx.y * 16 + threadIdx.x, ty = blockIdx.x * 16 + threadIdx.y;
  if (tx < n && ty < n) out[ty * n + tx] = tile[threadIdx.x][threadIdx.y] + static_cast<float>(x - y);
}

/// A tree over shared memory with interleaved addressing: a barrier inside a loop, whose counter
/// each thread keeps.
__global__ void bl_tree(const float* in, float* out, int n) {
  __shared__ float v[256];
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  v[threadIdx.x] = i < static_cast<unsigned>(n) ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned width = 1; width < blockDim.x; width *= 2) {
    if (threadIdx.x % (2 * width) == 0 && threadIdx.x + width < blockDim.x)
      v[threadIdx.x] = v[threadIdx.x] * 0.999f + v[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = v[0];
}

/// What a thread keeps across barriers: a loaded value, a local array indexed at run time, an
/// accumulator, a loop counter.
__global__ void bl_kept_values(const float* in, float* out, int n, int rounds) {
  __shared__ float sh[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float mine = i < n ? in[i] : 0.0f;
  float hist[4] = {mine, 1.0f, 2.0f, 3.0f};
  float acc = 0;
  for (int r = 0; r < rounds; ++r) {
    sh[threadIdx.x] = mine + static_cast<float>(r);
    __syncthreads();
    const float nb = sh[(threadIdx.x + static_cast<unsigned>(r) + 1) % blockDim.x];
    hist[(threadIdx.x + static_cast<unsigned>(r)) & 3] += nb;
    acc = acc * 0.75f + nb;
    __syncthreads();
  }
  if (i < n) out[i] = acc + hist[threadIdx.x & 3] * 0.5f + hist[(threadIdx.x + 1) & 3] * 0.25f;
}

/// A race between the barriers: each thread reads its neighbour's slot, which the neighbour writes
/// in the same phase. What it reads depends on the order the threads run in; block loops must
/// keep the emulator's order, phase after phase.
/// Launched in place (out == in): after the barrier each thread reads its own element, which the
/// thread before it has just written, and writes the next one. The parameters may overlap, so no
/// copy of the block loop may move a thread's read above the previous thread's write (as a
/// vectorised loop over the threads would, told the parameters are apart).
__global__ void bl_in_place_after_barrier(const float* in, float* out) {
  __shared__ float t[256];
  const unsigned base = blockIdx.x * blockDim.x;  // (the last thread writes the next block's first)
  t[threadIdx.x] = in[base + threadIdx.x];
  __syncthreads();
  out[base + threadIdx.x + 1] = t[threadIdx.x] * 0.5f + in[base + threadIdx.x];
}

__global__ void bl_racy_phases(float* out, int rounds) {
  __shared__ float v[256];
  v[threadIdx.x] = static_cast<float>(threadIdx.x);
  __syncthreads();
  for (int r = 0; r < rounds; ++r) {
    v[threadIdx.x] = v[(threadIdx.x + 1) % blockDim.x] * 0.5f + static_cast<float>(r);
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v[threadIdx.x];
}

/// Values a block loop must not take for the same in every thread, though each is computed from
/// uniform values: one set on a path only some threads take, one that leaves a loop (run at least
/// once) at a different iteration in each thread, and one read from shared memory at one address that the
/// threads of the phase increment one after another (a race, but the emulator's order decides).
/// And a uniform loop counter, kept across barriers and redefined after its use in each phase.
__global__ void bl_not_alike(const float* in, float* out, int n, int split) {
  __shared__ int counter;
  __shared__ float v[256];
  if (threadIdx.x == 0) counter = 0;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float u = 0.0f;
  if (static_cast<int>(threadIdx.x) < split) u = static_cast<float>(blockIdx.x) * 2.0f;
  int k = 0;
  do {
    k = k * 2 + 1 + static_cast<int>(blockIdx.x % 3);
  } while (k < static_cast<int>(threadIdx.x % 5));
  __syncthreads();
  const int ticket = counter;
  counter = ticket + 1;
  float acc = i < n ? in[i] : 0.0f;
  for (int r = 0; r < 3; ++r) {
    v[threadIdx.x] = u + static_cast<float>(k + r + ticket);
    __syncthreads();
    acc = acc * 0.5f + v[(threadIdx.x + static_cast<unsigned>(r) + 1) % blockDim.x];
    __syncthreads();
  }
  if (i < n) out[i] = acc + static_cast<float>(ticket) * 0.5f + u + static_cast<float>(k);
}

/// Two barriers at one place (an inlined helper's line), which the emulator takes for one: every
/// thread reaches both, so each phase still ends at one of them for the whole block.
__device__ inline void bl_sync_helper() { __syncthreads(); }
__global__ void bl_barriers_at_one_place(float* out) {
  __shared__ float v[256];
  v[threadIdx.x] = static_cast<float>(threadIdx.x);
  bl_sync_helper();
  const float a = v[(threadIdx.x + 1) % blockDim.x];
  bl_sync_helper();
  v[threadIdx.x] = a + 1.0f;
  out[blockIdx.x * blockDim.x + threadIdx.x] = a + v[threadIdx.x ^ 1u];
}

/// A uniform value redefined in each round, which some rounds keep across two barriers and the
/// others use in the phase that defined it.
__global__ void bl_redefined_in_phase(const float* in, float* out, int n, int rounds) {
  __shared__ float v[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = i < n ? in[i] : 0.0f;
  int m = 1;
  for (int r = 0; r < rounds; ++r) {
    m = m * 3 + r;
    if (r % 3 == 0) {
      v[threadIdx.x] = acc;
      __syncthreads();
      acc += v[(threadIdx.x + 1) % blockDim.x];
      __syncthreads();
    }
    acc = acc * 0.5f + static_cast<float>(m % 7);
  }
  if (i < n) out[i] = acc;
}

/// A barrier on a path every thread takes or none does (`rounds` even), and a uniform value
/// defined before it and used after the join: a phase that took the other path uses the value
/// it defined itself.
__global__ void bl_barrier_if(const float* in, float* out, int n, int rounds) {
  __shared__ float v[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = i < n ? in[i] : 0.0f;
  int m = 1;
  for (int r = 0; r < rounds; ++r) m = m * 3 + r;
  v[threadIdx.x] = acc;
  if (rounds % 2 == 0) {
    __syncthreads();
    acc += v[(threadIdx.x + 1) % blockDim.x];
  }
  acc += static_cast<float>(m % 7);
  if (i < n) out[i] = acc;
}

/// Dynamic shared memory and a barrier; each thread also reads a slot no thread writes, which the
/// emulator poisons before every block, block loop or not (a file without checks does not report
/// the read).
__global__ void bl_dynamic_shared(float* out) {
  float* s = gpulab::dynamic_shared<float>();
  s[threadIdx.x] = static_cast<float>(threadIdx.x) * 1.5f + static_cast<float>(blockIdx.x);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x] + s[blockDim.x];
  __syncthreads();
  s[blockDim.x] = 1.0f;  // the next block on this worker must still see poison there
}

/// A value computed after a barrier from one that left a loop (run at least once) at a different
/// iteration in each thread, and kept across the next barrier: uniform by its operands alone, yet
/// not the same in every thread.
__global__ void bl_loop_exit_kept(const float* in, float* out, int n) {
  __shared__ float v[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int k = 0;
  do {
    k = k * 2 + 1 + static_cast<int>(blockIdx.x % 3);
  } while (k < static_cast<int>(threadIdx.x % 5));
  v[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  const int w = k * 3 + 1;
  const float a = v[(threadIdx.x + 1) % blockDim.x] + static_cast<float>(w);
  __syncthreads();
  v[threadIdx.x] = a;
  if (i < n) out[i] = a + static_cast<float>(w) * 0.5f;
}

/// A local array of 24 bytes (aligned to 16, as arrays of 16 bytes or more are on x86-64) kept
/// across barriers, whose stores vectorise: each thread's copy must be as aligned as the array.
__global__ void bl_odd_sized_array(const float* in, float* out, int n) {
  __shared__ float v[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float x = i < n ? in[i] : 0.0f;
  float w[6];
  for (int k = 0; k < 6; ++k) w[k] = x * static_cast<float>(k + 1);
  v[threadIdx.x] = x;
  __syncthreads();
  for (int k = 0; k < 6; ++k) w[k] += v[(threadIdx.x + static_cast<unsigned>(k)) % blockDim.x];
  __syncthreads();
  if (i < n) out[i] = w[threadIdx.x % 6] + w[(threadIdx.x + 1) % 6];
}

/// Thread `quit` returns before the barrier the others reach: a fault.
__global__ void bl_return_before_barrier(float* out, int quit) {
  __shared__ float v[256];
  if (static_cast<int>(threadIdx.x) == quit) return;
  v[threadIdx.x] = 1.0f;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = v[(threadIdx.x + 1) % blockDim.x];
}

/// Threads below `split` meet a barrier the others skip, then all meet a second one: a fault.
/// (Two barriers in the two arms of an if-else would become one call whose line depends on the
/// arm, which gets no block loop.)
__global__ void bl_divergent_barriers(float* out, int split) {
  __shared__ float v[256];
  v[threadIdx.x] = 1.0f;
  if (static_cast<int>(threadIdx.x) < split) {
    __syncthreads();
    v[threadIdx.x] += v[0];
  }
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = v[1];
}

// ---- warp collectives: phases too, where every thread of the block reaches them alike ----

/// A warp sum by down-shuffles (offsets from warpSize), the warps' sums added through shared
/// memory, last warp first.
__global__ void bl_warp_sum(const float* in, float* out, int n) {
  __shared__ float by_warp[32];
  float s = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += in[i];
  for (int o = warpSize / 2; o > 0; o /= 2) s += __shfl_down_sync(gpulab::full_mask(), s, static_cast<unsigned>(o));
  if (gpulab::lane_id() == 0) by_warp[gpulab::warp_id()] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int w = static_cast<int>(blockDim.x) / warpSize - 1; w >= 0; --w) t += by_warp[w];
    out[blockIdx.x] = t;
  }
}

/// Each warp's inclusive scan by up-shuffles (a partial last warp reads only lanes below its own).
__global__ void bl_warp_scan(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, lane = gpulab::lane_id();
  float v = i < n ? in[i] : 0.0f;
  for (int d = 1; d < warpSize; d *= 2) {
    const float t = __shfl_up_sync(gpulab::full_mask(), v, static_cast<unsigned>(d));
    if (lane >= d) v += t;
  }
  if (i < n) out[i] = v;
}

/// Every kind of collective, a shuffle's source chosen per lane, in segments of `width` lanes.
__global__ void bl_warp_mix(const float* in, float* out, int n, int width) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, lane = gpulab::lane_id();
  const float v = i < n ? in[i] : 1.0f;
  const float a = __shfl_sync(gpulab::full_mask(), v, (lane * 7 + 3) % warpSize, width);
  const float b = __shfl_down_sync(gpulab::full_mask(), v, 3u, width);
  const float c = __shfl_xor_sync(gpulab::full_mask(), v, 5, width);
  const double d = __shfl_up_sync(gpulab::full_mask(), static_cast<double>(v) * 3.0, 2u, width);
  const unsigned long long yes = __ballot_sync(gpulab::full_mask(), v > 0.0f);
  const int any = __any_sync(gpulab::full_mask(), v > 250.0f), all = __all_sync(gpulab::full_mask(), v > -250.0f);
  if (i < n)
    out[i] = a + 2 * b + 4 * c + static_cast<float>(d) + static_cast<float>(__builtin_popcountll(yes)) + 1000.0f * any +
             2000.0f * all;
}

/// Lanes that talk through shared memory, ordered by __syncwarp.
__global__ void bl_warp_exchange(float* out) {
  __shared__ float s[256];
  s[threadIdx.x] = static_cast<float>(threadIdx.x * 3);
  __syncwarp();
  const float mine = s[threadIdx.x ^ 1u];
  __syncwarp();
  s[threadIdx.x] = mine + 1.0f;
  __syncwarp();
  out[blockIdx.x * blockDim.x + threadIdx.x] = s[threadIdx.x ^ 2u];
}

/// A race: every thread updates one shared value between shuffles (and some barriers); what each
/// reads is decided by the order in which the emulator runs the threads.
__global__ void bl_warp_race(float* out, int rounds) {
  __shared__ float shared_last;
  volatile float& last = shared_last;  // (else the compiler may keep each thread's view in a register)
  if (threadIdx.x == 0) last = 0.0f;
  __syncthreads();
  float v = static_cast<float>(threadIdx.x);
  for (int r = 0; r < rounds; ++r) {
    last = last * 0.5f + v * 0.25f;
    v = __shfl_down_sync(gpulab::full_mask(), v, 1u) * 0.5f + last;
    if (r % 3 == 1) __syncthreads();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v + last;
}

/// Each half of a warp shuffles among itself (two masks at one call: two rendezvous).
__global__ void bl_warp_halves(float* out) {
  const int lane = gpulab::lane_id(), half = warpSize / 2;
  const gpulab::lanemask_t low = (1ull << half) - 1ull;
  const gpulab::lanemask_t mask = lane < half ? low : gpulab::full_mask() & ~low;
  out[blockIdx.x * blockDim.x + threadIdx.x] = __shfl_xor_sync(mask, static_cast<float>(threadIdx.x), 1);
}

/// The order in which the threads run between stops, recorded: each thread takes a ticket from
/// one shared counter (a race, decided by the emulator's order) before each of `steps` stops, a
/// barrier, an up-shuffle, a ballot over half-warps or an any and a __syncwarp, chosen by two bits
/// of `pattern` each.
__global__ void bl_order(int* tickets, int pattern, int steps) {
  __shared__ int shared_counter;
  volatile int& counter = shared_counter;
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned n = blockDim.x * blockDim.y * blockDim.z;
  if (t == 0) counter = 0;
  __syncthreads();
  const int lane = gpulab::lane_id(), half = warpSize / 2;
  float v = static_cast<float>(t);
  for (int s = 0; s < steps; ++s) {
    const int ticket = counter;
    counter = ticket + 1;
    tickets[(blockIdx.x * n + t) * static_cast<unsigned>(steps) + static_cast<unsigned>(s)] = ticket;
    const int kind = (pattern >> (2 * (s % 16))) & 3;
    if (kind == 0) {
      __syncthreads();
    } else if (kind == 1) {
      v += __shfl_up_sync(gpulab::full_mask(), v, 1u);
    } else if (kind == 2) {
      const gpulab::lanemask_t low = (1ull << half) - 1ull;
      const gpulab::lanemask_t mask = lane < half ? low : gpulab::full_mask() & ~low;
      v += static_cast<float>(__builtin_popcountll(__ballot_sync(mask, (static_cast<int>(v) & 1) != 0)));
    } else {
      v += static_cast<float>(__any_sync(gpulab::full_mask(), v > 3.0f));
      __syncwarp();
    }
  }
  if (v < 0.0f) tickets[0] = -1;  // (never: keeps the collectives' results alive)
}

/// One shuffle down (in a partial last warp, the last live lane reads one that does not exist).
__global__ void bl_shuffle(float* out) {
  const float v = __shfl_down_sync(gpulab::full_mask(), static_cast<float>(threadIdx.x), 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

/// Every lane names only the lower 16 lanes: lane 16 is not in its own mask (a fault).
__global__ void bl_warp_narrow_mask(float* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = __shfl_xor_sync(0xffffull, static_cast<float>(threadIdx.x), 1);
}

// ---- kernels without one ----

__global__ void bl_barrier(float* out) {
  __shared__ float v[256];
  v[threadIdx.x] = static_cast<float>(threadIdx.x);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = v[(threadIdx.x + 1) % blockDim.x];
}

/// Offsets no lane can use: an up- and a down-shuffle by "negative" (huge unsigned) deltas, and an
/// xor with a negative lane mask, each keep the lane's own value; v + 2v + 4v + 8v.
__global__ void bl_warp_wild_offsets(float* out) {
  const float v = static_cast<float>(threadIdx.x);
  const float a = __shfl_up_sync(gpulab::full_mask(), v, 0xffffffffu);
  const float b = __shfl_down_sync(gpulab::full_mask(), v, 0x80000000u);
  const float c = __shfl_xor_sync(gpulab::full_mask(), v, -1);
  const float d = __shfl_down_sync(gpulab::full_mask(), v, 0x7fffffffu);
  out[blockIdx.x * blockDim.x + threadIdx.x] = a + 2.0f * b + 4.0f * c + 8.0f * d;
}

/// A sum whose mask is the literal 0xffffffff: at 64 lanes a warp, lane 0 reads lane 32, outside
/// the mask (a fault the fibers meet when the lower 32 lanes' rendezvous completes).
__global__ void bl_warp_literal_mask(float* out) {
  float v = static_cast<float>(threadIdx.x);
  for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffull, v, static_cast<unsigned>(o));
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

/// Two faults at one shuffle: lanes 0-15 read lane 20, outside their mask 0xffff, and lanes 16 and
/// up name no lane at all; the first is met first.
__global__ void bl_warp_two_faults(float* out) {
  const int lane = gpulab::lane_id();
  const gpulab::lanemask_t mask = lane < 16 ? 0xffffull : 0ull;
  out[blockIdx.x * blockDim.x + threadIdx.x] = __shfl_sync(mask, static_cast<float>(threadIdx.x), 20);
}

/// A width of 3 and an empty mask: the width is checked first, as the fibers do.
__global__ void bl_warp_bad_width_no_mask(float* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = __shfl_sync(0ull, static_cast<float>(threadIdx.x), 1, 3);
}

/// Lane 0 names only itself; the others name the whole warp, lane 0 too, and wait for it at a
/// ballot it never calls with their mask (undefined behaviour: on the fibers, a deadlock at the
/// barrier after it).
__global__ void bl_warp_crossed_masks(float* out) {
  const int lane = gpulab::lane_id();
  const unsigned long long votes = __ballot_sync(lane == 0 ? 1ull : gpulab::full_mask(), 1);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = static_cast<float>(__builtin_popcountll(votes));
}

/// A shuffle only the first warp reaches: no block loop (warps would stop at different places).
__global__ void bl_shuffle_first_warp(float* out) {
  float v = static_cast<float>(threadIdx.x);
  if (threadIdx.x < static_cast<unsigned>(warpSize)) v = __shfl_down_sync(gpulab::full_mask(), v, 1u);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

/// A shuffle after an early return: no block loop either.
__global__ void bl_shuffle_after_return(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = __shfl_down_sync(gpulab::full_mask(), static_cast<float>(i), 1u);
}

__global__ void bl_atomic(int* counter) { atomicAdd(counter, 1); }

__device__ __noinline__ int bl_helper(int x) { return x * 7 + static_cast<int>(threadIdx.x); }
__global__ void bl_calls(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = bl_helper(3); }

/// A local array of a run-time size: in a block loop the threads' arrays would pile up.
__global__ void bl_runtime_sized_local(float* out, int m) {
  float* buf = static_cast<float*>(__builtin_alloca(sizeof(float) * static_cast<unsigned>(m)));
  for (int k = 0; k < m; ++k) buf[k] = static_cast<float>(k * threadIdx.x);
  out[blockIdx.x * blockDim.x + threadIdx.x] = buf[m - 1];
}

/// __syncthreads_count: a barrier with a value (the fibers compute it).
__global__ void bl_barrier_count(int* out) {
  const int c = __syncthreads_count(threadIdx.x % 3 == 0);
  out[blockIdx.x * blockDim.x + threadIdx.x] = c;
}

/// Two barriers at one place, one of them only in some threads: the fibers would let threads at
/// the two go on together, each from its own; a block loop cannot. No block loop.
__global__ void bl_one_place_uneven(float* out, int split) {
  __shared__ float v[256];
  v[threadIdx.x] = 1.0f;
  if (static_cast<int>(threadIdx.x) < split) {
    bl_sync_helper();
    v[threadIdx.x] += v[0];
  }
  bl_sync_helper();
  out[blockIdx.x * blockDim.x + threadIdx.x] = v[1];
}

/// A parameter by value in memory, and a barrier.
__global__ void bl_by_value_barrier(BlTaps f, float* out) {
  __shared__ float v[256];
  f.taps[0] += static_cast<float>(threadIdx.x);
  v[threadIdx.x] = f.taps[0];
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = v[(threadIdx.x + 1) % blockDim.x] + f.taps[0];
}

/// Writes an index variable (the emulator's are variables): no block loop.
__global__ void bl_writes_index(int* out) {
  threadIdx.x += 1;
  out[blockIdx.x * blockDim.x + threadIdx.x - 1] = static_cast<int>(threadIdx.x);
}

/// The same work in every thread: reads no threadIdx (nothing to gain).
__global__ void bl_no_thread_index(int* out) { out[blockIdx.x] = static_cast<int>(blockDim.x); }

}  // namespace
