// <cooperative_groups/scan.h> for the gpulab emulator: inclusive and exclusive scans over a
// static tile (thread_block_tile<N>), with cg::plus by default or any operator of
// <cooperative_groups/reduce.h> (or a callable of the caller's). Thread rank r gets the operator
// folded over ranks 0..r (inclusive) or 0..r-1 (exclusive; rank 0 gets T(), which for cg::plus
// is the sum of nothing, 0).
#pragma once

#include "reduce.h"

namespace cooperative_groups {

/// Hillis-Steele over the tile's lanes (shfl_up): log2(N) steps, each lane adding the value
/// `offset` ranks below it where there is one.
template <unsigned N, class T, class Op = plus<T>>
T inclusive_scan(const thread_block_tile<N>& tile, T value, Op op = Op(), const char* file = __builtin_FILE(),
                 int line = __builtin_LINE()) {
  const unsigned rank = tile.thread_rank();
  for (unsigned offset = 1; offset < N; offset *= 2) {
    const T below = tile.shfl_up(value, offset, file, line);
    if (rank >= offset) value = static_cast<T>(op(below, value));
  }
  return value;
}

template <unsigned N, class T, class Op = plus<T>>
T exclusive_scan(const thread_block_tile<N>& tile, T value, Op op = Op(), const char* file = __builtin_FILE(),
                 int line = __builtin_LINE()) {
  const T inclusive = inclusive_scan(tile, value, op, file, line);
  const T below = tile.shfl_up(inclusive, 1, file, line);
  return tile.thread_rank() == 0 ? T() : below;
}

}  // namespace cooperative_groups
