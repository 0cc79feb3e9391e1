// gpulab/grade/perfmodel.hpp - the performance model v1 (docs/results/perfmodel.md) for the grader:
// the time of one SGEMM launch on a named GPU, predicted from what the emulator counted for it at a
// small size and scaled to the size the GPU grade measures. Its only implementation
// (harness/src/perfmodel.cpp, whose header explains each term); the scripts of docs/results/perfmodel/
// run it through gpulab-perfmodel-predict, and the test perfmodel_reproduces_pages checks that it
// still prints every number of the model's pages.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gpulab::grade::perfmodel {

/// A GPU's public specifications and the few numbers measured on it (`gpulab-perfmodel-predict gpus`).
struct Gpu {
  std::string name;
  int sms = 0;
  double clock_hz = 0;
  int schedulers = 0, fp32_lanes = 0, shared_wavefronts = 0, l1_sectors = 0, l1_lines = 0;
  double dram_bytes_per_s = 0;
  int regs_per_sm = 0, reg_unit = 0, max_warps = 0, max_blocks = 0;
  long long shared_per_sm = 0, shared_reserved = 0;
  double l2_latency_cycles = 0;
  double copy_bytes_per_s = 0;  ///< a float4 copy kernel's bandwidth, measured (bytes read + written)
  /// Global stores in the L2: seconds (GPU-wide) per sector and per 128-byte line of each store
  /// request, fitted to strided-store timings (docs/results/perfmodel/probes/stores.cu); 0: not measured
  double store_sector_seconds = 0, store_line_seconds = 0;
  /// Threads per warp (an AMD wavefront: 64). The emulator counts memory requests per 32 lanes
  /// at either width, so a request of a 64-wide warp's instruction counts twice.
  int warp = 32;
  /// 0: an SM's registers and warp slots are one pool (NVIDIA). n > 0: they are split over n SIMDs
  /// (AMD CDNA): regs_per_sm and max_warps are the CU's totals, a wave's registers come from one
  /// SIMD, reg_unit is the allocation unit of one wave's registers (threads x registers), and a
  /// block of one wave is not held by max_blocks (it needs no barrier).
  int simds = 0;
  /// false: a parameter set from public specifications only, no number in it measured on that GPU
  /// (copy_bytes_per_s is then the datasheet's peak and l2_latency_cycles the H200's latency in
  /// nanoseconds at this GPU's clock): predictions on it are not validated.
  bool measured = true;
};
/// "H200" (validated against one), "RTX4090" and "MI300X" (public specifications only, see
/// Gpu::measured); nullptr for a GPU the model has no parameters for.
const Gpu* gpu(const std::string& name);
/// The names gpu() knows, the validated one first.
std::vector<std::string> gpu_names();
/// The GPU a grade may predict for: one gpu() knows whose parameters were measured on it
/// (Gpu::measured); otherwise null, and `why` says which of the two it is not.
const Gpu* grading_gpu(const std::string& name, std::string& why);

/// One launch's counts, named as the columns of common/emu/passes's tables: instructions by class
/// (fma, fp32, integer, load, store, branch, convert, special, total), global_load_requests,
/// global_load_sectors, global_load_lines, global_store_requests, global_store_sectors,
/// shared_requests, shared_wavefronts, blocks, threads_per_block, barriers_per_block and
/// shared_loads_under_global_load (a share, 0..1). A missing name counts 0.
using Counts = std::map<std::string, double>;

struct Prediction {
  double seconds = 0;
  std::string bound;  ///< issue, fp32, shared, l1, l2, latency or dram
  int blocks_per_sm = 0;
  std::string limit;  ///< what limits the resident blocks: warps, blocks, registers, shared memory
  std::map<std::string, double> terms;  ///< predict_roofline: seconds of each term (dram, issue, ...)
};

/// The GPU's physical ceilings: its FP32 peak (an FMA, 2 FLOP, per FP32 lane and clock on every
/// SM) and its DRAM's bandwidth. No kernel exceeds them.
double fp32_peak_flops(const Gpu& g);
/// A device's peak rates, the device named as its runtime names it ("NVIDIA H200"): DRAM bytes per
/// second, FP32 operations per second, and its L2's bytes. The one form of a GPU's physical
/// ceilings: a table GPU's (ceilings), a device's (peak_rates), both checked by at_peak.
struct PeakRates {
  std::string device, source;  ///< source: where the numbers come from, for messages
  double dram_bytes_per_s = 0, fp32_flops = 0, l2_bytes = 0;
};
/// The ceilings of `g` by the table (its datasheet): fp32_peak_flops and dram_bytes_per_s; the
/// device is g's name, and no L2 is counted (l2_bytes 0).
PeakRates ceilings(const Gpu& g);
/// The one rule of the ceilings: the least seconds that `flops` FP32 operations and `dram_bytes`
/// bytes through the DRAM take at `peak`, each ceiling's apart (the larger is the least time of
/// the work). A prediction is beyond the ceilings when a second of its work takes longer
/// (beyond_ceiling), a timed call when it took less than its work's (physical_floor_ms).
struct AtPeak {
  double fp32_seconds = 0, dram_seconds = 0;
};
AtPeak at_peak(const PeakRates& peak, double flops, double dram_bytes);
/// Why a prediction for `g` is beyond its ceilings (more than its FP32 peak in `flops_per_s`, or
/// more than its DRAM's bandwidth in `dram_bytes_per_s`, the bytes the work must move through
/// the DRAM at least once over the time predicted): a model that predicts it was given counts
/// that miss work. Empty when within them (0: not predicted).
std::string beyond_ceiling(const Gpu& g, double flops_per_s, double dram_bytes_per_s);

/// Blocks of `threads` threads that fit on one SM (CU) with `registers` per thread and
/// `shared_bytes` per block, and what limits them (0 when not even one fits). On a GPU with SIMDs
/// (Gpu::simds) the registers limit the waves of each SIMD, as AMD's compiler computes its
/// occupancy (docs/results/perfmodel/resources.py --hip sets the two side by side).
int occupancy(const Gpu& g, long long threads, int registers, long long shared_bytes, std::string& limit);

/// Warp instructions of counts `c` on `g`: the threads' non-memory instructions / the warp's width
/// (lanes of a warp run together in these kernels) + one per warp-level memory request, global and
/// shared (the emulator counts requests per 32 lanes: a 64-wide warp's instruction counts two).
/// What predict_sgemm's and predict_roofline's issue terms divide by the schedulers (each computes
/// it inline); gpulab-perfmodel-predict reports it to set against Nsight Compute's count.
double warp_instructions(const Counts& c, const Gpu& g);

/// One launch of an n x n x n product, counted at `n` and predicted at `big_n`: counts that grow
/// with the K loop scale by (big_n / n)^3, global stores and blocks by (big_n / n)^2, barriers
/// per block by big_n / n.
Prediction predict_sgemm(const Counts& counted, int registers, long long shared_bytes, const Gpu& g, int n,
                         int big_n);

/// A streaming launch, all of whose blocks spread evenly over the SMs: the slowest of its SM pipes
/// (v1's issue, fp32, shared wavefronts, and the L1's sectors and lines, global_store_lines
/// included), of the DRAM moving `dram_bytes` at the GPU's copy bandwidth, and of its global
/// stores in the L2 ("l2": each store request's sectors and 128-byte lines, as the emulator counts
/// them, at the GPU's measured cost of each, Gpu::store_sector_seconds / store_line_seconds). A
/// 16-byte store per lane at a 64-byte stride writes 32 sectors in 16 lines per request where a
/// coalesced one writes 16 in 4: on an H200 such stores, not the DRAM's bytes, set the time
/// (docs/results/perfmodel.md, "Strided stores"). Counts are scaled by `scale` (work at the GPU's
/// size / work counted). No latency term: for kernels that keep enough bytes in flight
/// (perfmodel.md says where that fails).
Prediction predict_roofline(const Counts& counted, double dram_bytes, const Gpu& g, double scale = 1.0);

/// The global loads of a kernel in a PTX file (nvcc -ptx -lineinfo: the code nvcc's optimiser
/// produced, loops unrolled as the GPU will run them), grouped by the innermost loop each is in (a
/// loop is a backward branch): a group's bytes are what one thread asks of memory per trip of that
/// loop, which Little's law turns into bandwidth (read_bytes_per_s). The loads in no loop make one
/// group, issued once. Each load's source line comes from the PTX's .loc directives.
struct PtxLoadGroup {
  long long bytes = 0;
  int loads = 0;
  bool in_loop = false;
  /// "file:line" of its loads (the file's base name), and of the calls they are inlined into, each once
  std::vector<std::string> lines;
  /// Where exactly ("file:line:column", and "@file:line:column" of the call it is inlined into),
  /// each once: two groups with the same places are one source loop that nvcc split (an unrolled
  /// body and its remainder).
  std::vector<std::string> places;
};
struct PtxLoads {
  std::string kernel;  ///< the mangled name of the .entry
  std::vector<PtxLoadGroup> groups;
};
std::vector<PtxLoads> ptx_loads(const std::string& ptx);

/// The group that carries a call's loads: the one whose lines the call's global load requests
/// (`requests_at`, by "file:line", as the emulator counted them) hit most, `weight` of them. The
/// PTX cannot tell a loop that runs from one that never does; the counts can. Equal weights: one
/// source loop split by nvcc (the same places) counts its widest part, which runs all but the last
/// few trips; different loops count the narrowest (a dead loop's loads must not lend their
/// bytes), but for loads in no loop tied with a loop's (one helper function's load inlined at both:
/// the emulator counts both at the helper's line): loads in no loop run at most once per warp, so
/// where the lines hold more requests than `warps` (the call's warps, 0: unknown) times those
/// loads, the loop issued the rest and counts. Null when no group's lines were hit.
const PtxLoadGroup* busiest_load_group(const std::vector<const PtxLoadGroup*>& groups,
                                       const std::map<std::string, long long>& requests_at, long long& weight,
                                       long long warps = 0);

/// The DRAM read bandwidth a streaming kernel reaches on `g` when each of `threads_per_sm`
/// resident threads per SM keeps `bytes_per_thread` bytes of loads in flight: measured on an H200
/// (docs/results/perfmodel/probes/inflight.cu, docs/results/perfmodel-inflight-h200.tsv: 4 to 64
/// bytes per thread, 256 to 2048 threads per SM), interpolated in log2 of both, and scaled
/// linearly below the grid (Little's law); above it, the 64-byte row. 0 for a GPU without
/// those measurements.
double read_bytes_per_s(const Gpu& g, double bytes_per_thread, double threads_per_sm);

/// What a call must at least do (a timed call's physical floor): the bytes it must read (its
/// inputs: the grader flushes the L2 before every timed run, so they come from DRAM), the bytes it
/// must write, and its FP32 operations (an FMA counts 2).
struct Work {
  double read_bytes = 0, written_bytes = 0, flops = 0;
};

/// The larger of the table's datasheet numbers for a GPU whose name the device's contains (gpu():
/// an H200 4.8 TB/s and 132 x 128 x 2 x 1.98 GHz = 66.9 TFLOP/s) and the device's properties
/// (memory clock x 2 transfers x bus width; SMs x 128 FP32 lanes x 2 x clock); twice the properties
/// for a GPU the table lacks: a floor must never refuse an honest time.
PeakRates peak_rates(const std::string& device, double memory_clock_hz, int memory_bus_bits, int multiprocessors,
                     double clock_hz, double l2_bytes);

/// The least time `work` can take on a device of `peak`, in milliseconds: the larger of
/// (bytes read + bytes written beyond what the L2 holds) / DRAM bandwidth (writes may wait in the
/// L2 past the end of the run) and FLOPs / FP32 rate; `why` says how it was computed. 0 (with
/// `why`) when the peaks are not known.
double physical_floor_ms(const Work& work, const PeakRates& peak, std::string& why);

}  // namespace gpulab::grade::perfmodel
