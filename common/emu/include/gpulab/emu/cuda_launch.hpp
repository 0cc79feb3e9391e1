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
// Semantics are gpulab::launch's: the kernel's parameters are taken as the kernel declares them
// (arguments convert as with <<<>>>), the configuration is checked, and a kernel's faults surface
// at the next synchronization. The stream is accepted and not used: the emulator runs every
// launch synchronously, in order, which is a valid schedule of any stream program.
#pragma once

#include <cstddef>

#include "gpulab/gpu.hpp"

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

template <class... P>
void cuda_launch(void (*kernel)(P...), const LaunchConfig& config, ::gpulab::detail::identity_t<P>... args) {
  ::gpulab::launch(kernel, config.grid, config.block, config.shared_bytes, args...);
}

}  // namespace gpulab::emu
