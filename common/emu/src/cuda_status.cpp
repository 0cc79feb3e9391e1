// The CUDA runtime's error state for the shim (cuda_runtime_shim.hpp), kept in the emulator library
// (its thread-locals would otherwise land in the executable's TLS block, which is shared memory).
//
// CUDA has two kinds of errors. A kernel fault (illegal address, misaligned address, a trap...)
// corrupts the context: it is "sticky", every later call that touches the device returns it, and
// cudaGetLastError returns it without clearing it, until cudaDeviceReset. Other errors (an
// invalid launch configuration, a failed allocation) are only the calling thread's "last error":
// cudaGetLastError returns and clears it, cudaPeekAtLastError returns it.
#include <cstdio>
#include <mutex>

#include "gpulab/emu/runtime.hpp"

namespace gpulab::emu {
namespace {
std::mutex g_mutex;
int g_sticky = 0;
KernelFault g_sticky_fault;  ///< the kernel fault the sticky error came from
thread_local int t_last = 0;

/// The cudaError_t value of an emulator fault kind.
int code_of(const std::string& kind) {
  if (kind == "out-of-bounds" || kind == "not-device-memory" || kind == "shared-out-of-bounds")
    return 700;  // cudaErrorIllegalAddress
  if (kind == "misaligned") return 716;  // cudaErrorMisalignedAddress
  return 719;    // cudaErrorLaunchFailure: divergent or exited barrier, deadlock, warp-mask misuse...
}
}  // namespace

int cuda_sticky_error() {
  if (fault_pending()) {
    const KernelFault f = take_pending_fault();
    if (!f.kind.empty()) {
      std::fprintf(stderr, "[gpulab emu] %s\n", f.message.c_str());
      std::lock_guard<std::mutex> lock(g_mutex);
      if (g_sticky == 0) {
        g_sticky = code_of(f.kind);
        g_sticky_fault = f;
      }
    }
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_sticky;
}

int cuda_last_error(bool clear) {
  if (const int sticky = cuda_sticky_error()) return sticky;
  const int e = t_last;
  if (clear) t_last = 0;
  return e;
}

int cuda_record_error(int code) {
  if (code != 0) t_last = code;
  return code;
}

KernelFault cuda_sticky_fault() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_sticky_fault;
}

void cuda_reset_errors() {
  (void)take_pending_fault();
  std::lock_guard<std::mutex> lock(g_mutex);
  g_sticky = 0;
  g_sticky_fault = {};
  t_last = 0;
}

}  // namespace gpulab::emu
