// gpulab/emu/metrics.hpp - what the emulator measured about a kernel's memory accesses, and what
// its sanitizer found. Host-side API (the grader and `./gpulab run` use it).
//
// Kernel files of the emu back-end are compiled with clang's load/store tracing, so the emulator
// sees every access each emulated thread makes. It groups the accesses of the lanes of a warp
// into requests the way the hardware does (the k-th execution of one instruction by each lane of
// the warp is one request) and counts, per source line:
//   * global memory: 32-byte sectors per request, and the efficiency bytes requested / bytes
//     moved (100% when every byte of every sector is used);
//   * shared memory: wavefronts per request under 32 banks of 4 bytes (lanes reading the same
//     word share it: a broadcast, no conflict), and the bank conflicts (wavefronts beyond one).
// A warp of 64 lanes is counted as two requests of 32 lanes (lanes 0-31 and 32-63): AMD's
// hardware also serves a 64-lane wavefront in halves, and this way a kernel's numbers and a
// rubric's thresholds are the same at warp size 32 and 64 (docs/emulator-metrics.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpulab::emu {

/// Accesses of one source line (one kind of access) in one kernel launch.
struct LineMetrics {
  std::string file;       ///< file name as compiled
  int line = 0;
  long long launch_id = 0;  ///< which launch (counted from 1 since the program started)
  std::string launch;     ///< file:line of the launch that ran the kernel
  std::string kernel;     ///< the kernel's name, where the executable's symbols say it
  bool shared = false;    ///< shared memory (else global)
  bool store = false;     ///< store (else load)
  bool atomic = false;
  long long requests = 0;         ///< warp-level requests (32-lane groups)
  long long lane_accesses = 0;    ///< individual lane accesses
  long long bytes_requested = 0;  ///< sum of the lanes' access sizes
  long long units = 0;            ///< sectors (global) or wavefronts (shared)
  long long ideal_units = 0;      ///< the fewest sectors / wavefronts those bytes could need
  long long lines = 0;            ///< global: the 128-byte lines each request's sectors lie in, summed
  /// Shared loads: lane accesses made while a global load of the same lane had not yet been
  /// followed by a shared store (work that can hide that load's latency: a double-buffered loop).
  long long under_global_load = 0;
  /// The most frequent address step from a lane to the next (bytes): 4 for floats read
  /// contiguously, 4*n when each thread walks its own row of n floats.
  long long lane_stride_bytes = 0;
  /// Shared memory: wavefronts beyond the fewest possible (0 for conflict-free access).
  long long bank_conflicts() const { return shared ? units - ideal_units : 0; }
  double per_request() const { return requests ? static_cast<double>(units) / requests : 0; }
  double ideal_per_request() const { return requests ? static_cast<double>(ideal_units) / requests : 0; }
  /// Global: bytes requested / bytes moved (capped at 1). Shared: ideal / actual wavefronts.
  double efficiency() const;
};

/// True when kernel files were built with access tracing (clang); false e.g. with g++.
bool metrics_available();
void reset_metrics();
/// Per-launch, per-line metrics, sorted by launch, file and line. Identical from run to run and for any
/// number of workers.
std::vector<LineMetrics> metrics_by_line();
/// Blocks whose accesses were checked in full (metrics, shared-memory sanitizer) and blocks run,
/// since the program started; `sampled` when GPULAB_EMU_CHECKS=sample chose the checked ones.
struct CheckCoverage {
  long long checked_blocks = 0, blocks = 0;
  /// Blocks run as their kernel's block loop: all threads in one call (runtime.hpp, block loops).
  long long loop_blocks = 0;
  bool sampled = false;
  /// Blocks whose block loop has a jam copy: run by it (their threads' inner loops together), or
  /// refused by it (pointer parameters in one allocation, or inner loops whose counts differ
  /// between threads) and run thread after thread (twin_pass.cpp, "thread jam").
  long long jam_blocks = 0, jam_refused = 0;
};
CheckCoverage check_coverage();
/// Checks every block (false, the default) or a fixed sample of them (true), for the launches that
/// follow; overrides GPULAB_EMU_CHECKS (all | sample).
void set_check_sampling(bool sample);
/// Accesses left out of the metrics: a block keeps at most 2^23 of them (about 200 MB).
long long metrics_dropped_accesses();
/// The per-line table: `file:line  kind  requests  per-request (ideal)  efficiency`.
std::string format_metrics(const std::vector<LineMetrics>& m);

/// Instructions the emulated threads executed, by class, counted by the compiler pass
/// common/emu/passes/count_pass.cpp (LLVM IR of the kernel file after optimisation, per basic block
/// executed; an instruction of one thread counts once: divide by the warp size for warp
/// instructions where the warp's lanes run together). Zero everywhere when the kernel files were
/// built without the pass (no llvm-14-dev, or g++). Counted in every block, whatever the sampling.
namespace instr {
constexpr int fp32 = 0;      ///< float add, sub, mul, div, rem, neg, and fused multiply-adds (one each)
constexpr int fma32 = 1;     ///< of those, the fused multiply-adds (llvm.fma / llvm.fmuladd on float)
constexpr int fp64 = 2;      ///< the same on double
constexpr int integer = 3;   ///< integer arithmetic and logic, compares, selects, integer casts, indexed addresses
constexpr int load = 4;      ///< loads (any width, any memory)
constexpr int store = 5;     ///< stores
constexpr int branch = 6;    ///< conditional branches and switches
constexpr int convert = 7;   ///< conversions between integer and floating point, and between float widths
constexpr int special = 8;   ///< math functions (sqrt, exp, log, sin, cos, pow, min/max, fabs ...)
constexpr int total = 9;     ///< every instruction counted above, and float compares
constexpr int classes = 10;
}  // namespace instr
struct InstructionCounts {
  long long by_class[instr::classes] = {};
  long long operator[](int c) const { return by_class[c]; }
};
/// Totals since the program started or since reset_instruction_counts(), over all launches.
InstructionCounts instruction_counts();
void reset_instruction_counts();

/// A bug the sanitizer saw: an out-of-bounds or non-device global access, a shared-memory race,
/// a read of shared memory no thread of the block wrote, a misaligned access, or host code that
/// loaded or stored device memory directly (an illegal address on a GPU; on the emulator the
/// host code runs on, so that the whole run can be reported; see also watch.hpp).
struct Finding {
  std::string kind;     ///< out-of-bounds | not-device-memory | race | uninitialized-shared |
                        ///< misaligned | host-access
  std::string file;
  int line = 0;
  std::string message;  ///< file:line, block and thread ids, what happened, a one-line hint
  long long count = 0;  ///< times seen (the message describes the first, in block order)
  /// Races: the other access of the pair (the earlier write or read of the word), when known.
  std::string other_file;
  int other_line = 0;
};
/// Findings since reset, deduplicated by (kind, line), in a deterministic order.
std::vector<Finding> findings();
long long findings_total();
void reset_findings();
/// Turns the sanitizer's checks on or off (on by default; metrics are collected either way).
void set_sanitizer(bool on);

}  // namespace gpulab::emu
