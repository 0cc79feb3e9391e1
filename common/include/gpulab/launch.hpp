// gpulab/launch.hpp - gpulab::launch(kernel, grid, block, shared_bytes, args...), the portable
// replacement for kernel<<<grid, block, shared_bytes>>>(args...). Included by gpulab/gpu.hpp.
//
// The kernel's parameters are not deduced from `args` (they are taken as the kernel declares
// them), so arguments convert exactly as they would with <<<>>>. Kernel templates need their
// template arguments spelled out: gpulab::launch(reduce<256>, grid, block, 0, in, out, n).
// A launch whose configuration is invalid throws gpulab::Error naming the launch's file:line;
// faults inside the kernel surface at the next gpulab::synchronize(), as on a GPU.
#pragma once

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>

#include "gpulab/error.hpp"

namespace gpulab {
namespace detail {
template <class T>
struct identity {
  using type = T;
};
template <class T>
using identity_t = typename identity<T>::type;
}  // namespace detail

/// Grid dimensions that also remember the file:line of the launch that named them, so launch
/// errors point at the student's code. Converts implicitly from dim3 and from any integer.
struct LaunchGrid {
  dim3 dims;
  const char* file;
  int line;
  LaunchGrid(dim3 d, const char* f = __builtin_FILE(), int l = __builtin_LINE())
      : dims(d), file(f), line(l) {}
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  LaunchGrid(I x, const char* f = __builtin_FILE(), int l = __builtin_LINE())
      : dims(static_cast<unsigned>(x)), file(f), line(l) {}
};

/// What is wrong with a launch configuration, if anything.
struct LaunchProblem {
  enum class Kind {
    none,
    configuration,  ///< empty or too large a block or grid (CUDA: cudaErrorInvalidConfiguration)
    shared_memory,  ///< more dynamic shared memory than the kernel may use (cudaErrorInvalidValue)
  };
  Kind kind = Kind::none;
  std::string what, hint;
};
/// Validates a launch configuration against the device's limits, without throwing. `kernel`
/// keys its dynamic shared memory limit (null: a kernel not known, held to the largest limit any
/// kernel was given; see dynamic_shared_limit).
LaunchProblem launch_config_problem(const LaunchGrid& grid, dim3 block, std::size_t shared_bytes,
                                    const void* kernel = nullptr);
/// Validates a launch configuration against the device's limits; throws gpulab::Error.
void check_launch_config(const LaunchGrid& grid, dim3 block, std::size_t shared_bytes,
                         const void* kernel = nullptr);

/// Lets `kernel` use up to `bytes` of dynamic shared memory, beyond the default 48 KiB, up to the
/// device's opt-in limit (227 KiB on an H100/H200): cudaFuncSetAttribute(...,
/// cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) on CUDA, its HIP twin on ROCm, a limit the
/// emulator checks. Throws gpulab::Error when the device cannot give that much.
void allow_dynamic_shared_bytes(const void* kernel, std::size_t bytes, const char* file, int line);
/// The dynamic shared memory a launch of `kernel` may ask for: the device's default per block,
/// or what allow_dynamic_shared_bytes gave it (null: the most any kernel was given).
std::size_t dynamic_shared_limit(const void* kernel);
template <class... P>
void set_max_dynamic_shared(void (*kernel)(P...), std::size_t bytes, const char* file = __builtin_FILE(),
                            int line = __builtin_LINE()) {
  allow_dynamic_shared_bytes(reinterpret_cast<const void*>(kernel), bytes, file, line);
}

#if defined(GPULAB_BACKEND_EMU)
namespace detail {
namespace {
/// A type of each translation unit's own: as launch's last template argument, it gives every file
/// its own instantiation of launch and of the thunk each emulated thread runs. Otherwise the
/// linker keeps one thunk for all files, compiled with or without the emulator's access tracing
/// as it happens, and the closure's loads in an untraced file's launches may call the tracing
/// hooks (or those of a traced file may not).
struct ThisFile {};
}  // namespace
}  // namespace detail

template <class... P, class File = detail::ThisFile>
void launch(void (*kernel)(P...), LaunchGrid grid, dim3 block, std::size_t shared_bytes,
            detail::identity_t<P>... args) {
  check_launch_config(grid, block, shared_bytes, reinterpret_cast<const void*>(kernel));
  struct Closure {
    void (*kernel)(P...);
    std::tuple<std::decay_t<P>...> args;
  };
  const Closure closure{kernel, std::tuple<std::decay_t<P>...>(args...)};
  // Each emulated thread calls the kernel with its own copy of the by-value parameters.
  emu::launch_blocks(
      grid.dims, block, shared_bytes, grid.file, grid.line,
      [](const void* c) {
        const auto* cl = static_cast<const Closure*>(c);
        std::apply(cl->kernel, cl->args);
      },
      &closure, sizeof closure, reinterpret_cast<const void*>(kernel),
      [](const void* c, const void* block_loop) {  // a whole block at once (the kernel's block loop)
        const auto* cl = static_cast<const Closure*>(c);
        std::apply(reinterpret_cast<void (*)(P...)>(const_cast<void*>(block_loop)), cl->args);
      });
}
#else
/// Throws gpulab::Error when the launch just made failed (reads and clears the last error).
void check_launch(const LaunchGrid& grid, dim3 block, std::size_t shared_bytes);

template <class... P>
void launch(void (*kernel)(P...), LaunchGrid grid, dim3 block, std::size_t shared_bytes,
            detail::identity_t<P>... args) {
  check_launch_config(grid, block, shared_bytes, reinterpret_cast<const void*>(kernel));
  kernel<<<grid.dims, block, shared_bytes>>>(args...);
  check_launch(grid, block, shared_bytes);
}
#endif

}  // namespace gpulab
