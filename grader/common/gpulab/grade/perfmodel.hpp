// gpulab/grade/perfmodel.hpp - the performance model v1 (tools/perfmodel/model.py, predict_v1;
// docs/results/perfmodel.md) for the grader: the time of one SGEMM launch on a named GPU,
// predicted from what the emulator counted for it at a small size and scaled to the size the GPU
// grade measures. The Python model is the research tool, this one grades; the test
// perfmodel_cpp_matches_python runs both on the ladder's counts.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gpulab::grade::perfmodel {

/// A GPU's public specifications and the few numbers measured on it (see model.py's GPUS).
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
};
/// "H200"; nullptr for a GPU the model has no parameters for.
const Gpu* gpu(const std::string& name);

/// One launch's counts, named as the columns of tools/perfmodel's tables: instructions by class
/// (fma, fp32, integer, load, store, branch, convert, special, total), global_load_requests,
/// global_load_sectors, global_load_lines, global_store_requests, global_store_sectors,
/// shared_requests, shared_wavefronts, blocks, threads_per_block, barriers_per_block and
/// shared_loads_under_global_load (a share, 0..1). A missing name counts 0.
using Counts = std::map<std::string, double>;

struct Prediction {
  double seconds = 0;
  std::string bound;  ///< issue, fp32, shared, l1, latency or dram
  int blocks_per_sm = 0;
  std::string limit;  ///< what limits the resident blocks: warps, blocks, registers, shared memory
  std::map<std::string, double> terms;  ///< predict_roofline: seconds of each term (dram, issue, ...)
};

/// Blocks of `threads` threads that fit on one SM with `registers` per thread and `shared_bytes`
/// per block, and what limits them (0 when not even one fits).
int occupancy(const Gpu& g, long long threads, int registers, long long shared_bytes, std::string& limit);

/// One launch of an n x n x n product, counted at `n` and predicted at `big_n`: counts that grow
/// with the K loop scale by (big_n / n)^3, global stores and blocks by (big_n / n)^2, barriers
/// per block by big_n / n.
Prediction predict_sgemm(const Counts& counted, int registers, long long shared_bytes, const Gpu& g, int n,
                         int big_n);

/// A streaming launch, all of whose blocks spread evenly over the SMs: the slowest of its SM pipes
/// (v1's issue, fp32, shared wavefronts, and the L1's sectors and lines, global_store_lines
/// included) and of the DRAM moving `dram_bytes` at the GPU's copy bandwidth. Counts are scaled by
/// `scale` (work at the GPU's size / work counted). No latency term: for kernels that keep enough
/// bytes in flight (docs/results/perfmodel.md says where that fails).
Prediction predict_roofline(const Counts& counted, double dram_bytes, const Gpu& g, double scale = 1.0);

/// The global loads each kernel of a PTX file (nvcc -ptx, the code nvcc's optimiser produced:
/// loops unrolled as the GPU will run them) issues per trip of its busiest loop: the bytes one
/// thread asks of memory at a time, which Little's law turns into bandwidth (read_bytes_per_s).
/// A loop is a backward branch; of the innermost loops with loads, the one that loads the most
/// bytes per trip counts. A kernel whose loads are in no loop counts all its loads, issued once.
struct PtxLoads {
  std::string kernel;           ///< the mangled name of the .entry
  long long bytes_per_trip = 0;
  int loads_per_trip = 0;
  bool in_loop = false;
};
std::vector<PtxLoads> ptx_loads_per_trip(const std::string& ptx);

/// The DRAM read bandwidth a streaming kernel reaches on `g` when each of `threads_per_sm`
/// resident threads per SM keeps `bytes_per_thread` bytes of loads in flight: measured on an H200
/// (tools/perfmodel/probes/inflight.cu, docs/results/perfmodel-h200/inflight/inflight.tsv: 4 to 64
/// bytes per thread, 256 to 2048 threads per SM), interpolated in log2 of both, and scaled
/// linearly below the grid (Little's law); above it, the 64-byte row. 0 for a GPU without
/// those measurements.
double read_bytes_per_s(const Gpu& g, double bytes_per_thread, double threads_per_sm);

}  // namespace gpulab::grade::perfmodel
