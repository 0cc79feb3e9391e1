// gpulab/emu/cuda_runtime_launch.hpp - kernel launches with CUDA's error semantics, for the
// emulator: a launch whose configuration is invalid returns a code (and leaves it as the last
// error, for cudaGetLastError) instead of throwing as gpulab::launch does, and a launch after a
// kernel fault returns the sticky error without running. Included by gpulab/gpu.hpp after
// gpulab/launch.hpp on the emulator.
#pragma once

#include <algorithm>
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

/// The same for a launch whose kernel is found by calling `call(args...)` in each thread (a kernel
/// template whose arguments are deduced: cuda_launch.hpp). The arguments are copied once, here;
/// each thread's call copies them into the kernel's parameters. Without the kernel's address, the
/// dynamic shared memory is checked against the largest limit any kernel was given.
template <class Call, class... A>
cudaError_t launch_call_with_status(const Call& call, LaunchGrid grid, dim3 block, std::size_t shared_bytes,
                                    cudaStream_t stream, A... args) {
  (void)stream;
  if (const int sticky = cuda_sticky_error()) return static_cast<cudaError_t>(sticky);
  const LaunchProblem p = launch_config_problem(grid, block, shared_bytes, nullptr);
  if (p.kind != LaunchProblem::Kind::none) {
    std::fprintf(stderr, "[gpulab emu] %s:%d: %s\n  hint: %s\n", grid.file, grid.line, p.what.c_str(),
                 p.hint.c_str());
    return static_cast<cudaError_t>(cuda_record_error(
        p.kind == LaunchProblem::Kind::configuration ? cudaErrorInvalidConfiguration : cudaErrorInvalidValue));
  }
  struct Closure {
    Call call;
    std::tuple<A...> args;
  };
  const Closure closure{call, std::tuple<A...>(args...)};
  launch_blocks(
      grid.dims, block, shared_bytes, grid.file, grid.line,
      [](const void* c) {
        const auto* cl = static_cast<const Closure*>(c);
        std::apply(cl->call, cl->args);
      },
      &closure, sizeof closure);
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

/// cudaLaunchKernel with the kernel as a `const void*` (the C form): the emulator needs the kernel's
/// parameter types to unpack `args`, which the pointer no longer has. Any call of this form is a
/// compile error that says so.
namespace gpulab::emu {
template <class>
inline constexpr bool kNever = false;
}  // namespace gpulab::emu
template <class Kernel = void>
cudaError_t cudaLaunchKernel(const void*, gpulab::LaunchGrid, dim3, void**, std::size_t = 0, cudaStream_t = nullptr) {
  static_assert(gpulab::emu::kNever<Kernel>,
                "on the emulator, pass the kernel itself: cudaLaunchKernel(kernel, grid, block, args, shared, stream),"
                " not (const void*)kernel (CUDA accepts both; the emulator needs the kernel's parameter types)");
  return cudaErrorInvalidDeviceFunction;
}

/// cudaLaunchCooperativeKernel: the emulator runs no cooperative launch (every block resident at
/// once, for a grid group's sync), and says so as a GPU without the feature does
/// (cudaDevAttrCooperativeLaunch is 0): cudaErrorNotSupported, nothing run.
template <class... P>
cudaError_t cudaLaunchCooperativeKernel(void (*kernel)(P...), gpulab::LaunchGrid grid, dim3 block, void** args,
                                        std::size_t shared_bytes = 0, cudaStream_t stream = nullptr) {
  (void)kernel, (void)block, (void)args, (void)shared_bytes, (void)stream;
  if (const int sticky = gpulab::emu::cuda_sticky_error()) return static_cast<cudaError_t>(sticky);
  std::fprintf(stderr,
               "[gpulab emu] %s:%d: cudaLaunchCooperativeKernel: the emulator runs no cooperative launch"
               " (cudaDevAttrCooperativeLaunch is 0 here), so nothing ran\n  hint: split the kernel where the grid"
               " syncs into two launches (a launch boundary is a grid-wide barrier), or test"
               " cudaDevAttrCooperativeLaunch and fall back to that\n",
               grid.file, grid.line);
  return static_cast<cudaError_t>(gpulab::emu::cuda_record_error(cudaErrorNotSupported));
}

/// cudaLaunchKernelEx's launch attributes: accepted and without effect on the emulator (its
/// blocks run in no particular order on no particular multiprocessor; a cooperative launch's grid
/// sync is refused where it is called: cooperative_groups.h).
enum cudaLaunchAttributeID {
  cudaLaunchAttributeIgnore = 0,
  cudaLaunchAttributeAccessPolicyWindow = 1,
  cudaLaunchAttributeCooperative = 2,
  cudaLaunchAttributeSynchronizationPolicy = 3,
  cudaLaunchAttributeClusterDimension = 4,
  cudaLaunchAttributeClusterSchedulingPolicyPreference = 5,
  cudaLaunchAttributeProgrammaticStreamSerialization = 6,
  cudaLaunchAttributeProgrammaticEvent = 7,
  cudaLaunchAttributePriority = 8,
};
union cudaLaunchAttributeValue {
  char pad[64];
  int cooperative;
  int priority;
  int programmaticStreamSerializationAllowed;
  struct {
    unsigned x, y, z;
  } clusterDim;
};
struct cudaLaunchAttribute {
  cudaLaunchAttributeID id;
  char pad[8 - sizeof(cudaLaunchAttributeID)];
  cudaLaunchAttributeValue val;
};
/// The launch of cudaLaunchKernelEx: grid, block, dynamic shared memory, stream, attributes.
struct cudaLaunchConfig_t {
  dim3 gridDim;
  dim3 blockDim;
  std::size_t dynamicSmemBytes;
  cudaStream_t stream;
  cudaLaunchAttribute* attrs;
  unsigned numAttrs;
};

namespace gpulab::emu {
/// cudaLaunchKernelEx's configuration with the caller's file:line (for the launch's messages).
struct LaunchConfigAt {
  const cudaLaunchConfig_t* config;
  const char* file;
  int line;
  LaunchConfigAt(const cudaLaunchConfig_t* c, const char* f = __builtin_FILE(), int l = __builtin_LINE())
      : config(c), file(f), line(l) {}
};
}  // namespace gpulab::emu

/// cudaLaunchKernelEx(&config, kernel, args...): the launch `config` describes, the arguments
/// given by value as to a kernel call.
template <class... P, class... A>
cudaError_t cudaLaunchKernelEx(gpulab::emu::LaunchConfigAt at, void (*kernel)(P...), A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "cudaLaunchKernelEx: one argument per kernel parameter");
  const cudaLaunchConfig_t& c = *at.config;
  return gpulab::emu::launch_with_status(kernel, gpulab::LaunchGrid(c.gridDim, at.file, at.line), c.blockDim,
                                         c.dynamicSmemBytes, c.stream, std::forward<A>(args)...);
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

/// Cache and shared-memory bank preferences (older CUDA code sets them to "prefer shared" or to
/// 8-byte banks): accepted with no effect, as current GPUs treat them as hints or ignore them.
enum cudaFuncCache {
  cudaFuncCachePreferNone = 0,
  cudaFuncCachePreferShared = 1,
  cudaFuncCachePreferL1 = 2,
  cudaFuncCachePreferEqual = 3
};
enum cudaSharedMemConfig {
  cudaSharedMemBankSizeDefault = 0,
  cudaSharedMemBankSizeFourByte = 1,
  cudaSharedMemBankSizeEightByte = 2
};
template <class... P>
cudaError_t cudaFuncSetCacheConfig(void (*)(P...), cudaFuncCache) {
  return static_cast<cudaError_t>(gpulab::emu::cuda_sticky_error());
}
template <class... P>
cudaError_t cudaFuncSetSharedMemConfig(void (*)(P...), cudaSharedMemConfig) {
  return static_cast<cudaError_t>(gpulab::emu::cuda_sticky_error());
}
inline cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache) {
  return static_cast<cudaError_t>(gpulab::emu::cuda_sticky_error());
}
inline cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig) {
  return static_cast<cudaError_t>(gpulab::emu::cuda_sticky_error());
}

// ---- occupancy ------------------------------------------------------------------------------
// Computed from the limits cudaGetDeviceProperties reports (an H200's: 2048 threads and 32 blocks
// per multiprocessor, 228 KiB of shared memory of which each block reserves 1 KiB, warps of the
// emulator's warp size) and the kernel's dynamic shared memory. Registers and static shared
// memory are not known on the emulator, so a GPU may fit fewer blocks of a heavy kernel: code that
// sizes its grid or blocks from these calls must work with whatever they return, as on a GPU.
namespace gpulab::emu {
/// Blocks of `threads` threads, each with `dynamic_bytes` of dynamic shared memory, resident at
/// once on one multiprocessor; 0 when one block cannot start (too many threads, too much shared
/// memory for `kernel`).
inline int resident_blocks(const void* kernel, int threads, std::size_t dynamic_bytes) {
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess || threads <= 0 || threads > p.maxThreadsPerBlock) return 0;
  if (dynamic_bytes > ::gpulab::dynamic_shared_limit(kernel)) return 0;
  const int warp_threads = (threads + p.warpSize - 1) / p.warpSize * p.warpSize;
  const std::size_t shared_per_block = dynamic_bytes + p.reservedSharedMemPerBlock;
  const int by_shared = static_cast<int>(static_cast<std::size_t>(p.sharedMemPerMultiprocessor) / shared_per_block);
  return std::min({p.maxBlocksPerMultiProcessor, p.maxThreadsPerMultiProcessor / warp_threads, by_shared});
}
}  // namespace gpulab::emu

template <class Kernel>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, Kernel kernel, int block_size,
                                                                   std::size_t dynamic_bytes, unsigned flags) {
  if (const int sticky = gpulab::emu::cuda_sticky_error()) return static_cast<cudaError_t>(sticky);
  if (!blocks || flags > cudaOccupancyDisableCachingOverride)
    return static_cast<cudaError_t>(gpulab::emu::cuda_record_error(cudaErrorInvalidValue));
  *blocks = gpulab::emu::resident_blocks(reinterpret_cast<const void*>(kernel), block_size, dynamic_bytes);
  return cudaSuccess;
}
template <class Kernel>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, Kernel kernel, int block_size,
                                                          std::size_t dynamic_bytes) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, kernel, block_size, dynamic_bytes,
                                                                cudaOccupancyDefault);
}

/// The block size that keeps the most threads resident on a multiprocessor (the largest such size
/// when several tie), trying sizes from the limit down in steps of a warp, as the CUDA runtime
/// does; `dynamic_bytes_for(block size)` gives each size's dynamic shared memory. *min_grid is the
/// grid that fills the device at that size.
template <class UnaryFunction, class Kernel>
cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(int* min_grid, int* block_size, Kernel kernel,
                                                                    UnaryFunction dynamic_bytes_for,
                                                                    int block_size_limit = 0, unsigned flags = 0) {
  if (const int sticky = gpulab::emu::cuda_sticky_error()) return static_cast<cudaError_t>(sticky);
  cudaDeviceProp p;
  if (!min_grid || !block_size || cudaGetDeviceProperties(&p, 0) != cudaSuccess)
    return static_cast<cudaError_t>(gpulab::emu::cuda_record_error(cudaErrorInvalidValue));
  const int limit = block_size_limit <= 0 ? p.maxThreadsPerBlock : std::min(block_size_limit, p.maxThreadsPerBlock);
  int best_threads = 0, best_size = 0, best_blocks = 0;
  for (int aligned = (limit + p.warpSize - 1) / p.warpSize * p.warpSize; aligned > 0; aligned -= p.warpSize) {
    const int size = std::min(limit, aligned);
    int blocks = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, kernel, size,
                                                           static_cast<std::size_t>(dynamic_bytes_for(size)), flags);
    if (blocks * size > best_threads) best_threads = blocks * size, best_size = size, best_blocks = blocks;
    if (best_threads == p.maxThreadsPerMultiProcessor) break;
  }
  *min_grid = best_blocks * p.multiProcessorCount;
  *block_size = best_size;
  return cudaSuccess;
}
template <class UnaryFunction, class Kernel>
cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMem(int* min_grid, int* block_size, Kernel kernel,
                                                           UnaryFunction dynamic_bytes_for, int block_size_limit = 0) {
  return cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(min_grid, block_size, kernel, dynamic_bytes_for,
                                                                 block_size_limit, cudaOccupancyDefault);
}
template <class Kernel>
cudaError_t cudaOccupancyMaxPotentialBlockSizeWithFlags(int* min_grid, int* block_size, Kernel kernel,
                                                        std::size_t dynamic_bytes = 0, int block_size_limit = 0,
                                                        unsigned flags = 0) {
  return cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(
      min_grid, block_size, kernel, [dynamic_bytes](int) { return dynamic_bytes; }, block_size_limit, flags);
}
template <class Kernel>
cudaError_t cudaOccupancyMaxPotentialBlockSize(int* min_grid, int* block_size, Kernel kernel,
                                               std::size_t dynamic_bytes = 0, int block_size_limit = 0) {
  return cudaOccupancyMaxPotentialBlockSizeWithFlags(min_grid, block_size, kernel, dynamic_bytes, block_size_limit,
                                                     cudaOccupancyDefault);
}
/// The dynamic shared memory a block can still get with `blocks` blocks of `block_size` threads
/// per multiprocessor (cudaOccupancyAvailableDynamicSMemPerBlock).
template <class Kernel>
cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(std::size_t* bytes, Kernel kernel, int blocks, int block_size) {
  cudaDeviceProp p;
  if (!bytes || blocks <= 0 || cudaGetDeviceProperties(&p, 0) != cudaSuccess ||
      gpulab::emu::resident_blocks(reinterpret_cast<const void*>(kernel), block_size, 0) < blocks)
    return static_cast<cudaError_t>(gpulab::emu::cuda_record_error(cudaErrorInvalidValue));
  const std::size_t share = static_cast<std::size_t>(p.sharedMemPerMultiprocessor) / static_cast<std::size_t>(blocks);
  const std::size_t usable = share > p.reservedSharedMemPerBlock ? share - p.reservedSharedMemPerBlock : 0;
  *bytes = std::min(usable, gpulab::dynamic_shared_limit(reinterpret_cast<const void*>(kernel)));
  return cudaSuccess;
}

/// What the emulator knows of a kernel (see cudaFuncAttributes).
template <class Kernel>
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, Kernel kernel) {
  if (!attributes) return static_cast<cudaError_t>(gpulab::emu::cuda_record_error(cudaErrorInvalidValue));
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  *attributes = cudaFuncAttributes{};
  attributes->maxThreadsPerBlock = p.maxThreadsPerBlock;
  attributes->ptxVersion = attributes->binaryVersion = p.major * 10 + p.minor;
  attributes->maxDynamicSharedSizeBytes =
      static_cast<int>(gpulab::dynamic_shared_limit(reinterpret_cast<const void*>(kernel)));
  attributes->preferredShmemCarveout = cudaSharedmemCarveoutDefault;
  return cudaSuccess;
}
