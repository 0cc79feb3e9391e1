// gpulab/emu/cuda_launch.hpp - what a `<<<>>>` launch becomes on the emulator back-end. The
// translator (common/emu/cuda2emu) rewrites
//
//   callee<<<grid, block[, shared[, stream]]>>>(args...)
//     into ::gpulab::emu::cuda_launch(GPULAB_KERNEL_OF(callee),
//            ::gpulab::emu::launch_config(__FILE__, __LINE__, grid, block[, shared[, stream]]))(args...)
//
// and includes this header first. The configuration is the argument list of launch_config, so
// the C++ parser splits it exactly as CUDA does, and missing items take CUDA's defaults (no
// dynamic shared memory, the default stream). __FILE__/__LINE__ stand where `<<<` stood: launch
// errors and the emulator's findings name the student's `<<<` line.
//
// Which kernel: CUDA resolves `callee` as it resolves a call `callee(args...)`, so a kernel
// template's arguments are deduced from the launch's arguments (`reduce<<<g, b>>>(x, n)` launches
// reduce<float> for a float* x) and an overloaded kernel is chosen by them. GPULAB_KERNEL_OF gives
// cuda_launch two ways to name it:
//   * exact: when `callee` denotes one function (a kernel, a specialization spelt out in full, a
//     function pointer), its address. The arguments then convert to the kernel's parameter types
//     as in a call (a literal 0 to a pointer included), and the launch is the kernel's own, which
//     dynamic shared memory limits (cudaFuncSetAttribute) and block loops are keyed by;
//   * by call: otherwise (a template whose arguments are deduced, an overload set), each emulated
//     thread calls `callee(args...)` with the launch's arguments, decayed and copied once at the
//     launch, and C++ overload resolution picks the kernel as CUDA's does. Such a launch has no
//     kernel address: its dynamic shared memory may be as large as the largest limit any kernel
//     was given, and unchecked blocks run thread by thread.
// The test is made in a generic lambda's return type, where a callee that names no single
// function is a substitution failure, not an error.
//
// An invalid configuration becomes cudaGetLastError's code, and a kernel's faults are sticky
// errors from the next synchronization on, as in CUDA. The stream is accepted and not used: the
// emulator runs every launch synchronously, in order, which is a valid schedule of any stream
// program.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "gpulab/gpu.hpp"  // first: the kernel vocabulary (dim3, ...) the launch header uses
#include "gpulab/emu/cuda_runtime_launch.hpp"

/// The kernel a launch names (see above); the translator puts every launch's callee in it.
#define GPULAB_KERNEL_OF(...)                                                                      \
  ::gpulab::emu::kernel_ref(                                                                       \
      [&](auto gpulab_launch_tag) -> decltype(::gpulab::emu::exact_kernel(gpulab_launch_tag, __VA_ARGS__)) { \
        return ::gpulab::emu::exact_kernel(gpulab_launch_tag, __VA_ARGS__);                        \
      },                                                                                           \
      [&](auto&... gpulab_launch_args) { __VA_ARGS__(gpulab_launch_args...); })

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

/// The address of the one function `kernel` denotes; not viable when it denotes a template or an
/// overload set (the tag makes the call dependent, so that this is a substitution failure).
template <class Tag, class... P>
auto exact_kernel(Tag, void (*kernel)(P...)) {
  return kernel;
}
struct ExactKernelTag {};

/// The two ways GPULAB_KERNEL_OF names a kernel: `exact(tag)` (when viable) and `call(args...)`.
template <class Exact, class Call>
struct KernelRef {
  Exact exact;
  Call call;
};
template <class Exact, class Call>
KernelRef<Exact, Call> kernel_ref(Exact exact, Call call) {
  return {exact, call};
}

/// A launch of a known kernel: its parameters are the kernel's, so the arguments convert as in a
/// call. As with <<<>>>, a launch that cannot start (too many threads, too much shared memory) is
/// an error code for cudaGetLastError, with the reason on stderr, not an exception.
template <class... P>
struct ExactLaunch {
  void (*kernel)(P...);
  LaunchConfig config;
  void operator()(P... args) const {
    (void)launch_with_status(kernel, config.grid, config.block, config.shared_bytes, config.stream, args...);
  }
};

/// A launch whose kernel each thread finds by calling `call` with the arguments.
template <class Call>
struct CallLaunch {
  Call call;
  LaunchConfig config;
  template <class... A>
  void operator()(A&&... args) const {
    (void)launch_call_with_status(call, config.grid, config.block, config.shared_bytes, config.stream,
                                  std::decay_t<A>(std::forward<A>(args))...);
  }
};

template <class... P>
ExactLaunch<P...> cuda_launch(void (*kernel)(P...), const LaunchConfig& config) {
  return {kernel, config};
}
template <class Exact, class Call>
auto cuda_launch(const KernelRef<Exact, Call>& kernel, const LaunchConfig& config) {
  if constexpr (std::is_invocable_v<const Exact&, ExactKernelTag>)
    return cuda_launch(kernel.exact(ExactKernelTag{}), config);
  else
    return CallLaunch<Call>{kernel.call, config};
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
