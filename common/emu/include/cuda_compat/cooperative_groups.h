// <cooperative_groups.h> for the gpulab emulator: the thread block and its static tiles, on top
// of the emulator's __syncthreads and warp shuffles (so the emulator checks them the same way:
// a tile's sync or shuffle that not every lane of the tile reaches is reported).
//
// Supported: this_thread_block() with sync, thread_rank, size/num_threads, group_index,
// thread_index, group_dim/dim_threads; tiled_partition<N>(block or tile) for N a power of two up
// to warpSize, with sync, thread_rank, size/num_threads, meta_group_rank, meta_group_size, shfl,
// shfl_up, shfl_down, shfl_xor, any, all, ballot; cg::sync(group). Reductions: <cooperative_groups/reduce.h>;
// collective asynchronous copies: <cooperative_groups/memcpy_async.h>.
// coalesced_threads() (coalesced_group: size, thread_rank, sync, shfl, shfl_up, shfl_down, any, all,
// ballot). this_grid() (grid_group: thread_rank, block_rank, num_threads, num_blocks, size,
// block_index, dim_blocks, group_dim, dim_threads; its sync() stops the kernel: the emulator runs no
// cooperative launch). <cooperative_groups/scan.h>: inclusive_scan, exclusive_scan over a static
// tile. Not supported: cooperative launches, dynamic tiles, labeled or binary partitions, cg::reduce
// over a coalesced group.
#pragma once

#include "cuda_runtime.h"

namespace cooperative_groups {

namespace details {
/// The calling thread's rank in its block, x fastest (as the hardware numbers lanes).
inline unsigned block_rank() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
inline unsigned block_size() { return blockDim.x * blockDim.y * blockDim.z; }
}  // namespace details

class thread_block {
 public:
  void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const { __syncthreads(file, line); }
  unsigned thread_rank() const { return details::block_rank(); }
  unsigned size() const { return details::block_size(); }
  unsigned num_threads() const { return details::block_size(); }
  dim3 group_index() const { return dim3(blockIdx); }
  dim3 thread_index() const { return dim3(threadIdx); }
  dim3 group_dim() const { return blockDim; }
  dim3 dim_threads() const { return blockDim; }
};

inline thread_block this_thread_block() { return thread_block(); }

/// Every thread of the launch: its ranks and shape, valid in any launch. Its sync() needs a
/// cooperative launch (every block resident at once), which the emulator does not run: it stops
/// the kernel, saying so (is_valid() is false).
class grid_group {
 public:
  static unsigned long long block_rank() {
    return blockIdx.x + static_cast<unsigned long long>(gridDim.x) * (blockIdx.y + static_cast<unsigned long long>(gridDim.y) * blockIdx.z);
  }
  static unsigned long long num_blocks() { return static_cast<unsigned long long>(gridDim.x) * gridDim.y * gridDim.z; }
  static unsigned long long thread_rank() { return block_rank() * details::block_size() + details::block_rank(); }
  static unsigned long long num_threads() { return num_blocks() * details::block_size(); }
  static unsigned long long size() { return num_threads(); }
  static dim3 block_index() { return dim3(blockIdx); }
  static dim3 dim_blocks() { return gridDim; }
  static dim3 group_dim() { return gridDim; }
  static dim3 dim_threads() { return blockDim; }
  static bool is_valid() { return false; }
  [[noreturn]] void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    gpulab::emu::kernel_stop("unsupported",
                             "grid_group::sync() needs a cooperative launch (cudaLaunchCooperativeKernel), which the"
                             " emulator does not run; end the kernel there and launch a second one instead (a launch"
                             " boundary is a grid-wide barrier)",
                             file, line);
  }
};

inline grid_group this_grid() { return grid_group(); }

/// A static tile of N consecutive threads of the block (N a power of two, at most warpSize): a
/// tile never straddles two warps, so its collectives are warp collectives over its lanes.
template <unsigned N>
class thread_block_tile {
  static_assert(N >= 1 && N <= 64 && (N & (N - 1)) == 0, "tile sizes are powers of two up to 64 (warpSize)");

 public:
  /// `parent_size`: the threads of the group it was cut from (0: the whole block).
  explicit thread_block_tile(unsigned parent_size = 0) : parent_size_(parent_size) {}

  static constexpr unsigned num_threads() { return N; }
  static constexpr unsigned size() { return N; }
  unsigned thread_rank() const { return details::block_rank() % N; }
  unsigned meta_group_rank() const {
    const unsigned r = details::block_rank();
    return (parent_size_ ? r % parent_size_ : r) / N;
  }
  unsigned meta_group_size() const { return parent_size_ ? parent_size_ / N : (details::block_size() + N - 1) / N; }

  void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const { __syncwarp(mask(), file, line); }

  template <class T>
  T shfl(T v, int src_rank, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return __shfl_sync(mask(), v, src_rank, static_cast<int>(N), file, line);
  }
  template <class T>
  T shfl_down(T v, unsigned delta, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return __shfl_down_sync(mask(), v, delta, static_cast<int>(N), file, line);
  }
  template <class T>
  T shfl_up(T v, unsigned delta, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return __shfl_up_sync(mask(), v, delta, static_cast<int>(N), file, line);
  }
  template <class T>
  T shfl_xor(T v, unsigned lane_mask, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return __shfl_xor_sync(mask(), v, static_cast<int>(lane_mask), static_cast<int>(N), file, line);
  }
  int any(int pred, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return __any_sync(mask(), pred, file, line);
  }
  int all(int pred, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return __all_sync(mask(), pred, file, line);
  }
  /// Bit i: the tile's thread of rank i has a non-zero predicate.
  unsigned long long ballot(int pred, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return (__ballot_sync(mask(), pred, file, line) >> first_lane()) & all_lanes();
  }

 private:
  static constexpr unsigned long long all_lanes() { return N == 64 ? ~0ull : (1ull << N) - 1; }
  unsigned first_lane() const {
    const unsigned lane = details::block_rank() % static_cast<unsigned>(warpSize);
    return lane - lane % N;
  }
  unsigned long long mask() const { return all_lanes() << first_lane(); }
  unsigned parent_size_;
};

template <unsigned N>
thread_block_tile<N> tiled_partition(const thread_block&) {
  return thread_block_tile<N>(0);
}
template <unsigned N, unsigned M>
thread_block_tile<N> tiled_partition(const thread_block_tile<M>&) {
  static_assert(N <= M, "a tile is cut into smaller tiles");
  return thread_block_tile<N>(M);
}

/// The lanes of the caller's warp that are converged with it where it was made
/// (coalesced_threads(): __activemask at the caller's line, which the emulator answers with the
/// lanes that reached that line together). Ranks number the group's lanes in lane order.
class coalesced_group {
 public:
  explicit coalesced_group(unsigned long long lanes) : lanes_(lanes) {}

  unsigned num_threads() const { return static_cast<unsigned>(__builtin_popcountll(lanes_)); }
  unsigned size() const { return num_threads(); }
  unsigned thread_rank() const { return static_cast<unsigned>(__builtin_popcountll(lanes_ & ((1ull << lane()) - 1ull))); }
  unsigned meta_group_rank() const { return 0; }
  unsigned meta_group_size() const { return 1; }

  void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const { __syncwarp(lanes_, file, line); }

  /// The value of the group's thread of rank `src_rank`.
  template <class T>
  T shfl(T v, unsigned src_rank, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return __shfl_sync(lanes_, v, lane_of_rank(src_rank % size()), warpSize, file, line);
  }
  /// The value of rank thread_rank() + delta, or the caller's own beyond the last rank.
  template <class T>
  T shfl_down(T v, unsigned delta, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    const unsigned r = thread_rank() + delta;
    return __shfl_sync(lanes_, v, r < size() ? lane_of_rank(r) : lane(), warpSize, file, line);
  }
  /// The value of rank thread_rank() - delta, or the caller's own below rank 0.
  template <class T>
  T shfl_up(T v, unsigned delta, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    const unsigned r = thread_rank();
    return __shfl_sync(lanes_, v, r >= delta ? lane_of_rank(r - delta) : lane(), warpSize, file, line);
  }
  int any(int pred, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return __any_sync(lanes_, pred, file, line);
  }
  int all(int pred, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return __all_sync(lanes_, pred, file, line);
  }
  /// Bit i: the group's thread of rank i has a non-zero predicate.
  unsigned long long ballot(int pred, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    const unsigned long long by_lane = __ballot_sync(lanes_, pred, file, line);
    unsigned long long by_rank = 0;
    unsigned r = 0;
    for (unsigned long long left = lanes_; left != 0; left &= left - 1, ++r)
      if ((by_lane >> __builtin_ctzll(left)) & 1ull) by_rank |= 1ull << r;
    return by_rank;
  }

 private:
  static int lane() { return static_cast<int>(details::block_rank() % static_cast<unsigned>(warpSize)); }
  int lane_of_rank(unsigned rank) const {
    unsigned long long left = lanes_;
    for (unsigned r = 0; r < rank; ++r) left &= left - 1;
    return __builtin_ctzll(left);
  }
  unsigned long long lanes_;
};

inline coalesced_group coalesced_threads(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return coalesced_group(__activemask(file, line));
}

inline void sync(const coalesced_group& g, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  g.sync(file, line);
}

inline void sync(const grid_group& g, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  g.sync(file, line);
}
inline void sync(const thread_block& g, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  g.sync(file, line);
}
template <unsigned N>
void sync(const thread_block_tile<N>& g, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  g.sync(file, line);
}

}  // namespace cooperative_groups
