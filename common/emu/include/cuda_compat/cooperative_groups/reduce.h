// <cooperative_groups/reduce.h> for the gpulab emulator: cg::reduce over a static tile, and the
// operators CUDA gives it (cg::plus, cg::less = minimum, cg::greater = maximum, bit_and, bit_or,
// bit_xor). Every thread of the tile gets the result.
#pragma once

#include "../cooperative_groups.h"

namespace cooperative_groups {

template <class T>
struct plus {
  T operator()(const T& a, const T& b) const { return a + b; }
};
/// Reduces to the smallest value.
template <class T>
struct less {
  T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
/// Reduces to the largest value.
template <class T>
struct greater {
  T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <class T>
struct bit_and {
  T operator()(const T& a, const T& b) const { return a & b; }
};
template <class T>
struct bit_or {
  T operator()(const T& a, const T& b) const { return a | b; }
};
template <class T>
struct bit_xor {
  T operator()(const T& a, const T& b) const { return a ^ b; }
};

/// Butterfly over the tile's lanes (shfl_xor), so that every lane ends with the whole tile's value.
template <unsigned N, class T, class Op>
T reduce(const thread_block_tile<N>& tile, T value, Op op, const char* file = __builtin_FILE(),
         int line = __builtin_LINE()) {
  for (unsigned offset = N / 2; offset > 0; offset /= 2)
    value = static_cast<T>(op(value, tile.shfl_xor(value, offset, file, line)));
  return value;
}

}  // namespace cooperative_groups
