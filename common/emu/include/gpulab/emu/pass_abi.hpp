// gpulab/emu/pass_abi.hpp - the calls the emulator's compiler passes (common/emu/passes/) insert
// into kernel files, and the runtime functions (common/emu/src/) that answer them. The one place
// both sides name: the passes build their calls from the names below, the runtime defines the
// functions declared below (a definition that drifts from its declaration does not compile).
//
//   pass               inserts calls to / reads                      runtime
//   count_pass.cpp     gpulab_emu_icount (per-worker counters)       scheduler.cpp
//   device_pass.cpp    gpulab_emu_device_* (memcpy, memset, ...)     device_calls.cpp
//   twin_pass.cpp      register_twin, plain_twin, register_block,    scheduler.cpp
//                      block_scratch, block_phase_end,
//                      block_collective, pointers_apart, jam_block
//   every pass         traced_file: the marker of a traced kernel    kernel.hpp
//                      file (a global the passes look for)
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpulab::emu::pass_abi {
inline constexpr char icount[] = "gpulab_emu_icount";
inline constexpr char traced_file[] = "gpulab_emu_traced_file";
inline constexpr char prefix[] = "gpulab_emu_";  ///< every name here starts with it
inline constexpr char device_access[] = "gpulab_emu_device_access";
inline constexpr char device_atomic[] = "gpulab_emu_device_atomic";
inline constexpr char device_memcpy[] = "gpulab_emu_device_memcpy";
inline constexpr char device_memset[] = "gpulab_emu_device_memset";
inline constexpr char device_host_call[] = "gpulab_emu_device_host_call";
inline constexpr char device_indirect_call[] = "gpulab_emu_device_indirect_call";
inline constexpr char device_functions[] = "gpulab_emu_device_functions";
inline constexpr char register_twin[] = "gpulab_emu_register_twin";
inline constexpr char plain_twin[] = "gpulab_emu_plain_twin";
inline constexpr char register_block[] = "gpulab_emu_register_block";
inline constexpr char block_scratch[] = "gpulab_emu_block_scratch";
inline constexpr char block_phase_end[] = "gpulab_emu_block_phase_end";
inline constexpr char block_collective[] = "gpulab_emu_block_collective";
inline constexpr char pointers_apart[] = "gpulab_emu_pointers_apart";
inline constexpr char jam_block[] = "gpulab_emu_jam_block";
}  // namespace gpulab::emu::pass_abi

#ifndef GPULAB_PASS_ABI_NAMES_ONLY  // the passes need the names, the runtime the declarations
extern "C" {
// device_pass.cpp: every access of a kernel file the sanitizer's hooks do not see.
void gpulab_emu_device_access(const void* p, std::size_t n, int flags);
void gpulab_emu_device_atomic(const void* p, std::size_t n);
void gpulab_emu_device_memcpy(void* dst, const void* src, std::size_t n, std::size_t align);
void gpulab_emu_device_memset(void* dst, int value, std::size_t n, std::size_t align);
void gpulab_emu_device_host_call(const char* name);
void gpulab_emu_device_indirect_call(const void* target);
void gpulab_emu_device_functions(void* const* functions, std::size_t count);
// twin_pass.cpp: the registry of untraced twins and block loops.
void gpulab_emu_register_twin(void* traced, void* plain);
void* gpulab_emu_plain_twin(void* function);
void gpulab_emu_register_block(void* kernel, void* loop, int flags);
// For block loops of kernels with barriers: a context for the block's threads (per worker
// thread), and the end of one phase (every thread run to its next barrier or its return): the
// barrier the block goes on from, or 0 when it is done (a disagreement is recorded as a fault).
void* gpulab_emu_block_scratch(std::size_t bytes);
int gpulab_emu_block_phase_end(const int* states, int n, int first_thread, const void* barriers);
int gpulab_emu_pointers_apart(const void* const* pointers, int count, unsigned long long written);
void gpulab_emu_jam_block(int jammed);
int gpulab_emu_block_collective(int op_code, const std::uint64_t* masks, const std::uint64_t* values,
                                const int* args, const int* widths, std::uint64_t* results, int n,
                                int first_thread, const char* file, int line);
// count_pass.cpp: where each basic block adds its instruction counts (a worker's own array while
// it runs blocks, a scratch array elsewhere; never null).
extern __thread std::uint64_t* gpulab_emu_icount __attribute__((tls_model("initial-exec")));
}
#endif
