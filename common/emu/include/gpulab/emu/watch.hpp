// gpulab/emu/watch.hpp - evidence about who touched device memory during one call of a student's
// host function: kernels (which bytes they loaded and stored, how much traffic, how many
// launches), the host through the copy API (which copies and fills, from which file:line), and
// host code that dereferenced device pointers directly (legal on the emulator, an illegal address
// on a GPU). The grader wraps the call in begin_watch() / end_watch() and reads the queries after.
//
// Why: a kernel's memory metrics say how well it accessed memory, not that it did the work. A
// submission can copy the inputs to the host, compute there, copy the result into the output
// and launch a harmless "decoy" kernel; the watch shows that the kernels never read the inputs
// nor wrote the output, and which host copy did. Typical use (the grader's harness):
//
//   gpulab::emu::begin_watch();
//   student_function(d_in, d_out, n);                  // may launch kernels, copy, fill ...
//   gpulab::emu::end_watch();
//   if (gpulab::emu::watch_available()) {
//     kernel_written_bytes(d_out, out_bytes) == out_bytes  // every output byte came from a kernel
//     kernel_read_bytes(d_in, in_bytes)                   // distinct input bytes kernels loaded
//     host_writes()                                       // copies into device memory, file:line
//     host_accesses()                                     // host code that dereferenced d_in/d_out
//   }
//
// What is seen, and what is not:
//   * Kernel loads/stores are seen in files compiled with access tracing (the emu build with
//     clang++: kernel files, i.e. the student's file). watch_available() is false without it
//     (e.g. a g++ build): then the byte and sector queries return 0 and host_accesses() is empty,
//     which means "not measured", never "not touched". host_writes() and kernel_launches() are
//     recorded in every build (they do not need tracing). A large memcpy called inside a kernel
//     (a libc call, not a traced load/store) is not seen.
//   * Host writes are seen when they go through the copy API: gpulab::copy_to_device,
//     copy_device_to_device, fill_bytes (and DeviceBuffer's upload / poison, which call them),
//     and the CUDA shim's cudaMemcpy, cudaMemcpyAsync, cudaMemset, cudaMemsetAsync. Only copies
//     whose destination is device memory are listed.
//   * Direct host loads/stores of device memory are seen in traced files only, and only as
//     compiled loads/stores: host code calling libc memcpy/memset on a device pointer is not seen
//     (the grader can still notice output bytes that changed but that neither a kernel nor a
//     listed host write produced).
//   * Recording state is global: code under test could call begin_watch()/end_watch() itself
//     (the grader refuses submissions that call into gpulab::emu).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpulab::emu {

/// True when kernel accesses are traced (clang build of the emulator); false e.g. with g++.
bool watch_available();
/// Clears everything recorded by the previous watch and starts recording.
void begin_watch();
/// Stops recording; the results stay readable until the next begin_watch().
void end_watch();
/// True between begin_watch() and end_watch().
bool watch_active();

/// Distinct bytes of [p, p+bytes) that kernels loaded / stored during the watch: a byte counts
/// once however often it was accessed. Atomics count as both a load and a store. [p, p+bytes)
/// must lie inside one live device allocation, else 0.
std::size_t kernel_read_bytes(const void* p, std::size_t bytes);
std::size_t kernel_written_bytes(const void* p, std::size_t bytes);
/// The same in granules of `granule` bytes (a power of two, aligned in the address space) with at
/// least one byte read or written: what a GPU's DRAM moves at least for the range, however few
/// bytes of each granule are used (an H200 fetches 64 bytes: perfmodel.md). 0 for a granule that
/// is not a power of two.
std::size_t kernel_read_granules(const void* p, std::size_t bytes, std::size_t granule);
std::size_t kernel_written_granules(const void* p, std::size_t bytes, std::size_t granule);

/// Global-memory traffic of the kernels launched during the watch, as the memory metrics count
/// it: the distinct 32-byte sectors of each warp-level request, summed, for loads and for stores
/// (an atomic counts in both, as it reads and writes its sectors). Accesses beyond the metrics' per-block limit are not counted here
/// (they are in the byte bitmaps above).
long long kernel_load_sectors();
long long kernel_store_sectors();
/// Kernel launches that ran (at least one block) during the watch.
long long kernel_launches();
/// Each watched launch, in order: its blocks, threads per block, and the global sectors (loads +
/// stores, as counted above) its kernel moved. How many blocks carry the bulk of a call's traffic
/// is what decides whether it can use a whole GPU (one block per multiprocessor at least).
/// Per launch, what a performance model needs besides the shape (docs/results/perfmodel/model.py and the
/// grader's model, gpulab/grade/perfmodel.hpp): warp-level requests, 32-byte sectors and 128-byte
/// lines of global loads and stores, shared-memory requests and wavefronts, the shared loads a
/// lane issued while a global load of its own was on its way to shared memory (see
/// LineMetrics::under_global_load), barriers and shuffles, and the instructions the launch's
/// threads executed by class (gpulab::emu::instr; zero without the counting pass). Traffic is
/// counted in traced blocks (every block unless GPULAB_EMU_CHECKS=sample).
struct LaunchCounts {
  long long global_load_requests = 0, global_load_sectors = 0, global_load_lines = 0;
  long long global_store_requests = 0, global_store_sectors = 0, global_store_lines = 0;
  long long shared_requests = 0, shared_wavefronts = 0;
  long long shared_load_requests = 0, shared_load_wavefronts = 0;  ///< the loads among the above
  long long shared_load_lanes = 0, shared_load_lanes_under_global = 0;
  long long barriers = 0, shuffles = 0;
  long long instructions[10] = {};  ///< by gpulab::emu::instr class
};
/// Each count of LaunchCounts but the instructions, with the name the grader's kit and the
/// performance model's tables give it: the one list that code summing, subtracting or naming the
/// counts walks.
struct LaunchCountField {
  const char* name;
  long long LaunchCounts::*member;
};
inline constexpr LaunchCountField kLaunchCountFields[] = {
    {"global_load_requests", &LaunchCounts::global_load_requests},
    {"global_load_sectors", &LaunchCounts::global_load_sectors},
    {"global_load_lines", &LaunchCounts::global_load_lines},
    {"global_store_requests", &LaunchCounts::global_store_requests},
    {"global_store_sectors", &LaunchCounts::global_store_sectors},
    {"global_store_lines", &LaunchCounts::global_store_lines},
    {"shared_requests", &LaunchCounts::shared_requests},
    {"shared_wavefronts", &LaunchCounts::shared_wavefronts},
    {"shared_load_requests", &LaunchCounts::shared_load_requests},
    {"shared_load_wavefronts", &LaunchCounts::shared_load_wavefronts},
    {"shared_load_lanes", &LaunchCounts::shared_load_lanes},
    {"shared_load_lanes_under_global", &LaunchCounts::shared_load_lanes_under_global},
    {"barriers", &LaunchCounts::barriers},
    {"shuffles", &LaunchCounts::shuffles},
};
inline constexpr int kLaunchCountFieldCount = sizeof(kLaunchCountFields) / sizeof(kLaunchCountFields[0]);
struct LaunchShape {
  long long blocks = 0, threads_per_block = 0, sectors = 0;
  long long dynamic_shared_bytes = 0;  ///< the launch's dynamic shared memory per block
  /// The most global sectors (loads + stores) that one block of the launch moved: with `sectors`,
  /// how evenly the blocks share the work (a grid whose blocks but one return at once is a grid of one)
  long long max_block_sectors = 0;
  LaunchCounts counts;
};
std::vector<LaunchShape> launch_shapes();
/// Block-wide barriers (__syncthreads and its _count/_and/_or forms) completed during the watch,
/// one per block per barrier, and warp shuffles (__shfl*_sync), one per warp per shuffle: what
/// a reduction's combining costs besides memory. Counted in every build.
long long kernel_barriers();
long long kernel_shuffles();

/// A host-side write into device memory through the copy API.
struct HostWrite {
  std::uintptr_t dst = 0;  ///< first byte written
  std::size_t bytes = 0;
  std::string how;         ///< copy_to_device | copy_device_to_device | fill_bytes | cudaMemcpy | ...
  std::string file;        ///< the caller's file:line
  int line = 0;
};
/// The watch's host writes in call order. Consecutive writes of one call site that continue each
/// other (a row-by-row upload) are merged into one; past 65536 records, a write is merged into
/// the record of its call site and allocation as their bounding range (never dropped).
std::vector<HostWrite> host_writes();
/// Device memory the host copied out during the watch (copy_to_host, cudaMemcpy to host memory),
/// one record per call site (`dst` is the first source byte, `bytes` the sum). A lab function
/// only launches work: anything it reads back is what host code would compute with.
std::vector<HostWrite> host_reads();

/// Host code (outside any kernel) that loaded or stored device memory directly, grouped by
/// file:line. Only traced files are seen (the student's kernel file). Each such access is also
/// a sanitizer finding of kind "host-access" (see metrics.hpp), recorded with or without a watch.
struct HostAccess {
  std::string file;
  int line = 0;
  bool store = false;
  long long count = 0;
};
std::vector<HostAccess> host_accesses();

/// Names a device allocation in the sanitizer's messages ("4 bytes at sums + 0"): the grader
/// names the buffers it passes. The name goes when the allocation is freed. p must be the start
/// of a device allocation (anything else is ignored).
void label_device_memory(const void* p, const std::string& name);

/// Called by the copy API (gpulab/host.hpp on the emulator, the CUDA shim): records a host write
/// into device memory while a watch is active. Ignored when [dst, dst+bytes) is not device memory.
void note_host_write(const void* dst, std::size_t bytes, const char* how, const char* file, int line);
/// Called by the copy API: records a copy of device memory to the host while a watch is active.
void note_host_read(const void* src, std::size_t bytes, const char* how, const char* file, int line);
/// The CUDA shim's copies and fills (memmove / memset), reported with note_host_write. Out of
/// line on purpose: see cuda_runtime_shim.hpp.
void host_copy(void* dst, const void* src, std::size_t bytes, const char* how, const char* file, int line);
void host_fill(void* dst, int value, std::size_t bytes, const char* how, const char* file, int line);

}  // namespace gpulab::emu
