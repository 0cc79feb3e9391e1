// gpulab/emu/cuda_runtime_launch.hpp - kernel launches with CUDA's error semantics, for the
// emulator: a launch whose configuration is invalid returns a code (and leaves it as the last
// error, for cudaGetLastError) instead of throwing as gpulab::launch does, and a launch after a
// kernel fault returns the sticky error without running. Included by gpulab/gpu.hpp after
// gpulab/launch.hpp on the emulator.
#pragma once

#include <cstdio>
#include <tuple>
#include <type_traits>
#include <utility>

#include "gpulab/emu/cuda_runtime_shim.hpp"
#include "gpulab/error.hpp"
#include "gpulab/launch.hpp"

namespace gpulab::emu {

/// Validates and runs a launch as the CUDA runtime would report it: cudaSuccess;
/// cudaErrorInvalidConfiguration (empty or too large a block or grid) or cudaErrorInvalidValue
/// (more dynamic shared memory than allowed), explained on stderr with the launch's file:line,
/// recorded as the last error and not run; or, after a kernel fault, the sticky error. The
/// stream is accepted: work runs in issue order. The kernel's own faults surface later, at
/// cudaDeviceSynchronize, cudaMemcpy, cudaGetLastError... as on a GPU.
template <class... P>
cudaError_t launch_with_status(void (*kernel)(P...), LaunchGrid grid, dim3 block, std::size_t shared_bytes,
                               cudaStream_t stream, ::gpulab::detail::identity_t<P>... args) {
  (void)stream;
  if (const int sticky = cuda_sticky_error()) return static_cast<cudaError_t>(sticky);
  const LaunchProblem p = launch_config_problem(grid, block, shared_bytes, reinterpret_cast<const void*>(kernel));
  if (p.kind != LaunchProblem::Kind::none) {
    std::fprintf(stderr, "[gpulab emu] %s:%d: %s\n  hint: %s\n", grid.file, grid.line, p.what.c_str(),
                 p.hint.c_str());
    return static_cast<cudaError_t>(cuda_record_error(
        p.kind == LaunchProblem::Kind::configuration ? cudaErrorInvalidConfiguration : cudaErrorInvalidValue));
  }
  ::gpulab::launch(kernel, grid, block, shared_bytes, args...);
  return cudaSuccess;
}

/// cudaLaunchKernel's arguments, each given by its address, unpacked as the kernel's parameters.
template <class... P, std::size_t... I>
cudaError_t launch_from_pointers(void (*kernel)(P...), LaunchGrid grid, dim3 block, void** args,
                                 std::size_t shared_bytes, cudaStream_t stream, std::index_sequence<I...>) {
  return launch_with_status(kernel, grid, block, shared_bytes, stream,
                            *static_cast<std::remove_cv_t<std::remove_reference_t<P>>*>(args[I])...);
}

}  // namespace gpulab::emu

/// cudaLaunchKernel(kernel, grid, block, args, shared_bytes, stream): args[i] points at the i-th
/// parameter's value. The kernel must be a function (not a `const void*`), so its parameter
/// types are known.
template <class... P>
cudaError_t cudaLaunchKernel(void (*kernel)(P...), gpulab::LaunchGrid grid, dim3 block, void** args,
                             std::size_t shared_bytes = 0, cudaStream_t stream = nullptr) {
  return gpulab::emu::launch_from_pointers(kernel, grid, block, args, shared_bytes, stream,
                                                   std::index_sequence_for<P...>{});
}

/// cudaFuncAttributeMaxDynamicSharedMemorySize lets the kernel's launches ask for that much
/// dynamic shared memory (up to the device's opt-in limit: beyond it, cudaErrorInvalidValue).
/// The carve-out preference is accepted and has no effect.
template <class... P>
cudaError_t cudaFuncSetAttribute(void (*kernel)(P...), cudaFuncAttribute attr, int value,
                                 const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  if (const int sticky = gpulab::emu::cuda_sticky_error()) return static_cast<cudaError_t>(sticky);
  if (attr == cudaFuncAttributePreferredSharedMemoryCarveout) return cudaSuccess;
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0)
    return static_cast<cudaError_t>(gpulab::emu::cuda_record_error(cudaErrorInvalidValue));
  try {
    gpulab::allow_dynamic_shared_bytes(reinterpret_cast<const void*>(kernel), static_cast<std::size_t>(value), file,
                                       line);
  } catch (const gpulab::Error& e) {
    std::fprintf(stderr, "[gpulab emu] %s\n", e.what());
    return static_cast<cudaError_t>(gpulab::emu::cuda_record_error(cudaErrorInvalidValue));
  }
  return cudaSuccess;
}
