// gpulab/emu/runtime.hpp - the CPU emulator's runtime interface.
//
// Kernel-facing entry points (barriers, warp collectives) are called through the CUDA
// vocabulary in kernel.hpp. Host-facing entry points (launch, device memory, configuration,
// errors) are called through gpulab/launch.hpp and gpulab/host.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct dim3;

namespace gpulab::emu {

using lanemask_t = unsigned long long;

// ---- configuration -----------------------------------------------------------------------
/// Lanes per warp, 1..64 and a power of two. Default: $GPULAB_WARP_SIZE, else 32.
void set_warp_size(int lanes);
int warp_size();
/// Worker OS threads that run blocks. Default: $GPULAB_EMU_WORKERS, else the core count.
/// Results do not depend on it (blocks are independent; see docs/architecture.md).
void set_workers(int workers);
int workers();
/// Bytes of stack per emulated GPU thread. Default: $GPULAB_EMU_STACK_KB KiB, else 64 KiB.
void set_stack_bytes(std::size_t bytes);
std::size_t stack_bytes();

/// Block loops (common/emu/passes/twin_pass.cpp): a kernel without barriers, warp collectives or
/// calls runs a block nobody checks as one call for all its threads. Default: on, unless
/// $GPULAB_EMU_BLOCK_LOOPS=0. Results are the same either way.
void set_block_loops(bool on);
bool block_loops_on();
/// Whether `kernel` has a block loop in this executable (its file was compiled with the pass).
bool has_block_loop(const void* kernel);

// ---- launching ---------------------------------------------------------------------------
using KernelThunk = void (*)(const void* closure);
/// Calls `function`, a function of the kernel's own type, with the closure's arguments: how the
/// emulator calls a kernel's block loop (common/emu/passes/twin_pass.cpp), once for a whole block.
using BlockThunk = void (*)(const void* closure, const void* function);
/// Runs a whole grid to completion (the emulator is synchronous). A fault inside the kernel
/// (divergent barrier, deadlock, ...) stops it and becomes the pending error. `kernel` is the
/// launched function (null where unknown): the key of its block loop, if it has one.
void launch_blocks(dim3 grid, dim3 block, std::size_t dynamic_shared_bytes, const char* file,
                   int line, KernelThunk thunk, const void* closure, std::size_t closure_bytes,
                   const void* kernel = nullptr, BlockThunk block_thunk = nullptr);

// ---- errors ------------------------------------------------------------------------------
/// A fault found while running a kernel.
struct KernelFault {
  std::string kind;     ///< "divergent-barrier", "exit-at-barrier", "deadlock", "warp-sync", ...
  std::string message;  ///< full text: file:line, block and thread, what, hint
};
/// The first fault since the last take_pending_fault() (like CUDA's sticky error); empty
/// kind = none. Later launches are skipped while a fault is pending.
KernelFault take_pending_fault();
bool fault_pending();

// ---- CUDA-style error codes (the shim in cuda_runtime_shim.hpp) ---------------------------
/// The sticky error (a cudaError_t value; 0: none). A pending kernel fault becomes it here (its
/// message printed once on stderr): cudaErrorIllegalAddress for an access outside device or
/// shared memory, cudaErrorMisalignedAddress, else cudaErrorLaunchFailure. Once set it stays for
/// the rest of the process (as a corrupted CUDA context does), until cuda_reset_errors().
int cuda_sticky_error();
/// The sticky error if any, else the calling thread's last error (cleared when `clear`).
int cuda_last_error(bool clear);
/// Records a non-sticky error as the calling thread's last error; returns `code`.
int cuda_record_error(int code);
/// The kernel fault the sticky error came from (kind empty: none): a program that goes on after
/// its CUDA calls took a fault (a launch, a copy or cudaDeviceSynchronize returned the error) no
/// longer has it pending; the grader's kit reports it as the call's fault from here.
KernelFault cuda_sticky_fault();
/// cudaDeviceReset: forgets the sticky and the last error (and a fault not yet read).
void cuda_reset_errors();

// ---- device memory -----------------------------------------------------------------------
/// Device allocations are host memory registered with the emulator (so that the sanitizer can
/// tell global memory from anything else), page-aligned, filled with 0xFF bytes (NaN floats,
/// -1 integers) so that reading memory nobody wrote is visible, and surrounded by inaccessible
/// guard regions (64 KiB before, 1 MiB after), so that an access far out of bounds faults
/// instead of corrupting the host's memory.
///
/// The emulated device has a memory size, like a GPU: $GPULAB_EMU_DEVICE_MEMORY_MB MiB, else half
/// of the memory the process may use (the machine's, or its cgroup limit when lower), at most
/// 16 GiB. An allocation beyond what is left returns nullptr and, if `refusal` is given, says why:
/// "100 GB: the emulated device has 12 GB left of 12 GB (set GPULAB_EMU_DEVICE_MEMORY_MB to
/// change it); a GPU would fail this allocation too (cudaErrorMemoryAllocation)" (sizes in binary
/// units). Without the cap a huge allocation would be filled until the OS killed the process.
void* device_alloc(std::size_t bytes, std::string* refusal = nullptr);
void device_free(void* p);
/// The emulated device's memory size, and the bytes its live allocations take (page-rounded).
std::size_t device_memory_bytes();
std::size_t device_memory_used();
/// Changes the memory size for the rest of the run (tests; students use the variable).
void set_device_memory_bytes(std::size_t bytes);
/// True when [p, p+bytes) lies inside one live device allocation.
bool is_device_range(const void* p, std::size_t bytes);
/// Device memory is inaccessible to host code, as on a GPU: between the runtime's own calls every
/// allocation is mapped without access, and a host load or store of it faults. The fault is not
/// fatal: it becomes a "host-access" finding with the file:line of the host code (the call into
/// the library, for libc's memcpy on a device pointer), the memory opens and the program runs on.
/// The runtime's copies and fills and every launch hold this scope, which opens the memory while
/// it lasts. (Not part of the API a kernel file may use.) GPULAB_EMU_HOST_ACCESS=allow leaves it
/// open.
class DeviceMemoryScope {
 public:
  DeviceMemoryScope();
  ~DeviceMemoryScope();
  DeviceMemoryScope(const DeviceMemoryScope&) = delete;
  DeviceMemoryScope& operator=(const DeviceMemoryScope&) = delete;
};
/// `__device__` and `__constant__` variables the CUDA shim was told about (cudaMemcpyToSymbol,
/// cudaGetSymbolAddress & co. name them): the runtime's copies and fills may target them as they
/// target device allocations.
void note_device_symbol(const void* p, std::size_t bytes);
bool is_device_symbol_range(const void* p, std::size_t bytes);

// ---- called from kernel code (through kernel.hpp) ----------------------------------------
enum class BarrierOp { sync, count, all, any };
int sync_block(BarrierOp op, int pred, const char* file, int line);
enum class WarpOp { sync, shfl, shfl_up, shfl_down, shfl_xor, ballot, any, all };
/// Rendezvous of the lanes in `mask`. For shfl: returns the value of lane `src` (-1 = own
/// value). For ballot: the mask of lanes whose `value` is non-zero; any/all: 0 or 1 over the
/// lanes that took part. For sync: 0.
std::uint64_t warp_collective(WarpOp op, lanemask_t mask, std::uint64_t value, int src,
                              const char* file, int line);
lanemask_t active_mask(const char* file, int line);
/// Lanes of the caller's warp that have not exited.
lanemask_t live_lanes();
void* dynamic_shared_base();
void note_atomic(const void* p, std::size_t bytes, const char* file, int line);
/// One atomic read-modify-write of the `bytes` (1, 2, 4 or 8) at p, traced as an atomic at the
/// caller's line: `op` computes the new bytes from the current ones (it may be called again when
/// another worker changed them meanwhile); the bytes it replaced are copied to `old`. Out of line,
/// so that an atomic instruction in a kernel file is always the kernel's own (device_pass.cpp
/// traces those).
using AtomicOp = void (*)(const void* current, void* next, const void* context);
void atomic_apply(void* p, std::size_t bytes, AtomicOp op, const void* context, void* old, const char* file, int line);
/// __threadfence(): a fence, which the sanitizer's check between blocks sees (cross_block.cpp).
void thread_fence();
/// Stops the calling thread's block with a fault of `kind` (the kernel then fails, as on a GPU,
/// with cudaErrorLaunchFailure): __trap(), and what the emulator cannot run (a grid group's sync).
[[noreturn]] void kernel_stop(const char* kind, const char* message, const char* file, int line);

}  // namespace gpulab::emu
