// gpulab/emu/cuda_launch.hpp - what a `<<<>>>` launch becomes on the emulator back-end. The
// translator (tools/cuda2emu) rewrites
//
//   callee<<<grid, block[, shared[, stream]]>>>(args...)
//     into ::gpulab::emu::cuda_launch(callee,
//            ::gpulab::emu::launch_config(__FILE__, __LINE__, grid, block[, shared[, stream]]),
//            args...)
//
// and includes this header first. The configuration is the argument list of launch_config, so
// the C++ parser splits it exactly as CUDA does, and missing items take CUDA's defaults (no
// dynamic shared memory, the default stream). __FILE__/__LINE__ stand where `<<<` stood: launch
// errors and the emulator's findings name the student's `<<<` line.
//
// The kernel's parameters are taken as the kernel declares them (arguments convert as with
// <<<>>>); an invalid configuration becomes cudaGetLastError's code, and a kernel's faults are
// sticky errors from the next synchronization on, as in CUDA. The stream is accepted and not used: the emulator runs every
// launch synchronously, in order, which is a valid schedule of any stream program.
#pragma once

#include <cstddef>

#include "gpulab/gpu.hpp"  // first: the kernel vocabulary (dim3, ...) the launch header uses
#include "gpulab/emu/cuda_runtime_launch.hpp"

namespace gpulab::emu {

struct LaunchConfig {
  ::gpulab::LaunchGrid grid;
  dim3 block;
  std::size_t shared_bytes;
  cudaStream_t stream;  // accepted, unused (see above)
};

/// grid and block: a dim3 or any integer, as in CUDA.
inline LaunchConfig launch_config(const char* file, int line, dim3 grid, dim3 block, std::size_t shared_bytes = 0,
                                  cudaStream_t stream = nullptr) {
  return LaunchConfig{::gpulab::LaunchGrid(grid, file, line), block, shared_bytes, stream};
}

/// As with <<<>>>, a launch that cannot start (too many threads, too much shared memory) is an
/// error code for cudaGetLastError, with the reason on stderr, not an exception; a fault of the
/// kernel is a sticky error at the next synchronization.
template <class... P>
void cuda_launch(void (*kernel)(P...), const LaunchConfig& config, ::gpulab::detail::identity_t<P>... args) {
  (void)launch_with_status(kernel, config.grid, config.block, config.shared_bytes, config.stream, args...);
}

/// What `extern __shared__ T name[];` at namespace scope becomes: indexed, or converted to T*,
/// it is the running block's dynamic shared memory, as the CUDA array is.
template <class T>
struct DynamicSharedArray {
  template <class I>
  T& operator[](I i) const {
    return ::gpulab::dynamic_shared<T>()[i];
  }
  operator T*() const { return ::gpulab::dynamic_shared<T>(); }
};

}  // namespace gpulab::emu
