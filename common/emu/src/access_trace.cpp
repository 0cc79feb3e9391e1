// Entry points of clang's load/store tracing (-fsanitize-coverage=trace-loads,trace-stores),
// called before every load and store of an instrumented kernel file (at once returning in a
// block nobody traces: internal.hpp, untraced_block).
#include <cstdint>

#include "internal.hpp"

extern "C" {
#define GPULAB_TRACE(n, T)                                                        \
  void __sanitizer_cov_load##n(T* p) {                                            \
    if (gpulab::emu::detail::untraced_block) return;                              \
    gpulab::emu::detail::on_access(p, n, false, __builtin_return_address(0));     \
  }                                                                               \
  void __sanitizer_cov_store##n(T* p) {                                           \
    if (gpulab::emu::detail::untraced_block) return;                              \
    gpulab::emu::detail::on_access(p, n, true, __builtin_return_address(0));      \
  }
GPULAB_TRACE(1, std::uint8_t)
GPULAB_TRACE(2, std::uint16_t)
GPULAB_TRACE(4, std::uint32_t)
GPULAB_TRACE(8, std::uint64_t)
GPULAB_TRACE(16, __int128)
#undef GPULAB_TRACE
}
