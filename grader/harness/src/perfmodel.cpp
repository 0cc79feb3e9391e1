// The grader's performance model (gpulab/grade/perfmodel.hpp; docs/results/perfmodel.md), its only
// implementation: docs/results/perfmodel/model.py and the other scripts there run it through
// gpulab-perfmodel-predict (harness/src/perfmodel_predict.cpp).
//
// predict_sgemm (v1): per SM rather than for the whole GPU,
//   - the busiest SM's whole blocks (ceil(blocks / SMs)), so a partial last wave counts;
//   - the SM's pipes for one block: issue (warp instructions, warp_instructions(), over the
//     schedulers the resident warps can use), FP32 (FMAs over the FP32 lanes), shared memory
//     (wavefronts, 32 banks of 4 bytes per clock) and the L1 (its sectors per clock, and at most
//     one 128-byte line per clock: a request touching 32 lines takes 32);
//   - occupancy: blocks resident per SM from registers, shared memory, warps and the block limit;
//   - latency: each barrier interval of a block ends only after the global loads that feed its
//     shared-memory tile have returned (the L2's latency, measured on the GPU by
//     docs/results/perfmodel/probes/latency.cu), less the work the block does while they are in
//     flight (a double-buffered loop: its shared loads issued before it stores the loaded values).
//     The resident blocks share the SM as a closed queue (b blocks, each alternating a service of
//     the SM's pipes and a wait), solved exactly by mean-value analysis; one block alone pays the
//     whole latency every interval, many blocks hide it;
//   - the DRAM moving the three matrices once.
// Counts at n^3 scale by (N / n)^3 to the predicted N, global stores (C, written once) and blocks
// by (N / n)^2, barriers per block by N / n. No cache model beyond the L1's sectors and lines, and
// the instruction count is the optimised x86 IR's, not the GPU's (perfmodel.md).
#include "gpulab/grade/perfmodel.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <cmath>
#include <initializer_list>
#include <utility>
#include <vector>

namespace gpulab::grade::perfmodel {
namespace {

double get(const Counts& c, const std::string& name) {
  const auto it = c.find(name);
  return it == c.end() ? 0.0 : it->second;
}

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

}  // namespace

const Gpu* gpu(const std::string& name) {
  // H200 SXM: 132 SMs, 1,980 MHz boost, 128 FP32 lanes and 4 schedulers per SM, 4.8 TB/s HBM3e
  // (NVIDIA's H200 datasheet, H100 whitepaper); compute capability 9.0's limits (CUDA
  // programming guide); the L2's latency measured on an H200 (docs/results/perfmodel/probes/latency.cu).
  // The copy bandwidth: the grader's float4 copy kernel on an H200 at 512 MiB (lab 03's grade
  // reports on the H200, in git history: git show d98f299:docs/results/lab03-h200/verdicts-cuda/;
  // 3.87e12 bytes/s).
  // The stores' L2 costs: a least-squares fit (relative errors) to the H200's times of 4-, 8- and
  // 16-byte stores per lane at strides up to 64 bytes, every byte written
  // (docs/results/perfmodel-stores-h200.tsv; docs/results/perfmodel/stores_fit.py).
  static const Gpu h200{"H200", 132,  1.98e9, 4,       128,   1,   4,       1,        4.8e12,
                        65536,  256,  64,     32,      233472, 1024, 288, 3.87e12, 1.76e-12, 2.14e-11};
  // The others: public specifications only (Gpu::measured false); docs/results/perfmodel.md,
  // "Other GPUs", gives each number's source. Unmeasured: the copy bandwidth (the datasheet's
  // peak), the L2's latency (the H200's 145 ns at this GPU's clock), the stores' L2 costs (no term).
  auto h200_latency_at = [](double clock_hz) { return 288.0 / 1.98e9 * clock_hz; };
  // GeForce RTX 4090 (AD102, compute capability 8.9): 128 SMs, 2,520 MHz boost, 128 FP32 lanes and
  // 4 schedulers per SM (82.6 TFLOP/s), 1,008 GB/s GDDR6X (NVIDIA's Ada whitepaper); compute
  // capability 8.9's limits: 64 K registers in units of 256, 48 warps, 24 blocks, 100 KB of shared
  // memory with 1 KB reserved per block (CUDA programming guide).
  static const Gpu rtx4090 = [&] {
    Gpu g{"RTX4090", 128, 2.52e9, 4, 128, 1, 4, 1, 1.008e12, 65536, 256, 48, 24, 102400, 1024,
          h200_latency_at(2.52e9), 1.008e12};
    g.measured = false;
    return g;
  }();
  // Instinct MI300X (CDNA 3): 304 CUs, 2,100 MHz peak, 5.3 TB/s HBM3, 163.4 TFLOP/s FP32 vector
  // (AMD's MI300X datasheet): 128 FP32 FMAs per CU and clock, packed. A CU: 4 SIMDs of 16 lanes,
  // each running a 64-wide wave's instruction in 4 clocks (one wave instruction per CU and clock);
  // LDS 64 KB, 32 banks of 4 bytes (one 32-lane wavefront per clock); the vector L1 64 bytes per
  // clock (AMD's CDNA 3 whitepaper and ISA guide). Occupancy as the AMDGPU compiler computes it for
  // gfx90a/gfx940: 512 KB of registers per CU (128 K), 512 per lane of each SIMD, allocated in
  // units of 8; 8 waves per SIMD; 16 blocks of more than one wave (one barrier each).
  static const Gpu mi300x = [&] {
    Gpu g{"MI300X", 304, 2.1e9, 1, 128, 1, 2, 1, 5.3e12, 131072, 8 * 64, 32, 16, 65536, 0,
          h200_latency_at(2.1e9), 5.3e12};
    g.warp = 64;
    g.simds = 4;
    g.measured = false;
    return g;
  }();
  for (const Gpu* g : {&h200, &rtx4090, &mi300x})
    if (name == g->name) return g;
  return nullptr;
}

std::vector<std::string> gpu_names() { return {"H200", "RTX4090", "MI300X"}; }

const Gpu* grading_gpu(const std::string& name, std::string& why) {
  const Gpu* g = gpu(name);
  if (!g) why = "the performance model has no parameters for a GPU named '" + name + "'";
  else if (!g->measured)
    why = "the performance model's " + name +
          " is public specifications only, nothing measured on one: a grade predicts for a measured GPU (H200)";
  return g && g->measured ? g : nullptr;
}

double fp32_peak_flops(const Gpu& g) { return 2.0 * g.fp32_lanes * g.sms * g.clock_hz; }

PeakRates ceilings(const Gpu& g) {
  PeakRates p;
  p.device = g.name;
  p.source = "the " + g.name + "'s datasheet";
  p.dram_bytes_per_s = g.dram_bytes_per_s;
  p.fp32_flops = fp32_peak_flops(g);
  return p;
}

AtPeak at_peak(const PeakRates& peak, double flops, double dram_bytes) {
  return {flops / peak.fp32_flops, dram_bytes / peak.dram_bytes_per_s};
}

std::string beyond_ceiling(const Gpu& g, double flops_per_s, double dram_bytes_per_s) {
  // A second of the predicted work, at the ceilings: more than a second is beyond them.
  const PeakRates peak = ceilings(g);
  const AtPeak second = at_peak(peak, flops_per_s, dram_bytes_per_s);
  std::ostringstream os;
  os.precision(3);
  if (second.fp32_seconds > 1)
    os << flops_per_s / 1e12 << " TFLOP/s, " << second.fp32_seconds << " times the FP32 peak of an "
       << g.name << " (" << peak.fp32_flops / 1e12 << " TFLOP/s: " << g.sms << " SMs x " << g.fp32_lanes
       << " FMA lanes x 2 FLOP x " << g.clock_hz / 1e9 << " GHz)";
  else if (second.dram_seconds > 1)
    os << dram_bytes_per_s / 1e12 << " TB/s, " << second.dram_seconds << " times the DRAM bandwidth of an "
       << g.name << " (" << peak.dram_bytes_per_s / 1e12 << " TB/s)";
  return os.str();
}

int occupancy(const Gpu& g, long long threads, int registers, long long shared_bytes, std::string& limit) {
  const long long warps = ceil_div(threads, g.warp);
  const long long per_warp = ceil_div(static_cast<long long>(registers) * g.warp, g.reg_unit) * g.reg_unit;
  long long by_registers = g.regs_per_sm / std::max(1LL, per_warp * warps);
  long long by_blocks = g.max_blocks;
  if (g.simds > 0) {
    // A wave's registers come from one SIMD: whole waves per SIMD, then whole blocks per CU.
    const long long per_simd = g.regs_per_sm / g.simds;
    by_registers = per_simd / std::max(1LL, per_warp) * g.simds / warps;
    if (warps == 1) by_blocks = g.max_warps;
  }
  std::vector<std::pair<std::string, long long>> limits{
      {"warps", g.max_warps / warps}, {"blocks", by_blocks}, {"registers", by_registers}};
  if (shared_bytes) limits.push_back({"shared memory", g.shared_per_sm / (shared_bytes + g.shared_reserved)});
  auto best = limits.begin();
  for (auto it = limits.begin(); it != limits.end(); ++it)
    if (it->second < best->second) best = it;
  limit = best->first;
  return static_cast<int>(best->second);
}

double warp_instructions(const Counts& c, const Gpu& g) {
  return (get(c, "total") - get(c, "load") - get(c, "store")) / g.warp +
         32.0 / g.warp * (get(c, "global_load_requests") + get(c, "global_store_requests") + get(c, "shared_requests"));
}

Prediction predict_sgemm(const Counts& counted, int registers, long long shared_bytes, const Gpu& g, int n, int big_n) {
  const double s1 = static_cast<double>(big_n) / n, s2 = s1 * s1, s3 = s2 * s1;
  auto scaled = [&](const char* name) {
    const std::string k = name;
    const bool per_output = k == "global_store_requests" || k == "global_store_sectors";
    return get(counted, k) * (per_output ? s2 : s3);
  };
  const double blocks = get(counted, "blocks") * s2;
  const long long threads = static_cast<long long>(get(counted, "threads_per_block"));
  const double intervals = get(counted, "barriers_per_block") * s1 + 1;
  const double hidden = get(counted, "shared_loads_under_global_load");
  Prediction p;
  const int b = occupancy(g, threads, registers, shared_bytes, p.limit);
  p.blocks_per_sm = b;
  if (b < 1 || blocks <= 0 || threads < 1) {
    p.seconds = INFINITY;
    p.bound = b < 1 ? "occupancy" : "no blocks";
    return p;
  }
  const double warps = static_cast<double>(ceil_div(threads, g.warp));
  const double per_request = 32.0 / g.warp;  // instructions per request counted (per 32 lanes)
  const double per_sm = std::ceil(blocks / g.sms);
  const double lines = scaled("global_load_lines") + scaled("global_store_requests");
  const double sectors = scaled("global_load_sectors") + scaled("global_store_sectors");
  const double fp32 = scaled("fma") / g.fp32_lanes / blocks;
  const double shared = scaled("shared_wavefronts") / g.shared_wavefronts / blocks;
  const double l1 = std::max(sectors / g.l1_sectors, lines / g.l1_lines) / blocks;
  // Warp instructions: non-memory thread instructions / the warp's width, plus one per warp-level
  // memory instruction.
  const double warp_instr = ((scaled("total") - scaled("load") - scaled("store")) / g.warp +
                             per_request * (scaled("global_load_requests") + scaled("global_store_requests") +
                                            scaled("shared_requests"))) /
                            blocks;
  const double issue = warp_instr / std::min(static_cast<double>(g.schedulers), b * warps);
  const double service = std::max({issue, fp32, shared, l1}) / intervals;
  const double exposed = std::max(0.0, g.l2_latency_cycles - hidden * service);
  double queue = 0, rate = 0;
  for (int k = 1; k <= b; ++k) {
    const double response = service * (1 + queue);
    rate = k / (response + exposed);
    queue = rate * response;
  }
  const double sm_cycles = per_sm * intervals / rate;
  const double throughput = per_sm * intervals * service;
  const double dram = 3.0 * big_n * big_n * 4 / g.dram_bytes_per_s;
  p.seconds = std::max(sm_cycles / g.clock_hz, dram);
  if (p.seconds == dram) {
    p.bound = "dram";
  } else if (sm_cycles > 1.05 * throughput) {
    p.bound = "latency";
  } else {
    std::pair<const char*, double> top{"issue", issue};
    for (const auto& kv : {std::pair<const char*, double>{"fp32", fp32}, {"shared", shared}, {"l1", l1}})
      if (kv.second > top.second) top = kv;
    p.bound = top.first;
  }
  return p;
}

Prediction predict_roofline(const Counts& counted, double dram_bytes, const Gpu& g, double scale) {
  auto c = [&](const char* name) { return get(counted, name) * scale; };
  const double clock = g.clock_hz * g.sms;  // SM cycles per second, all SMs
  const double warp_instr =
      (c("total") - c("load") - c("store")) / g.warp +
      32.0 / g.warp * (c("global_load_requests") + c("global_store_requests") + c("shared_requests"));
  const double sectors = c("global_load_sectors") + c("global_store_sectors");
  const double lines = c("global_load_lines") + c("global_store_lines");
  const std::pair<const char*, double> terms[] = {
      {"dram", dram_bytes * scale / g.copy_bytes_per_s},
      {"l2", c("global_store_sectors") * g.store_sector_seconds + c("global_store_lines") * g.store_line_seconds},
      {"issue", warp_instr / (clock * g.schedulers)},
      {"fp32", c("fma") / (clock * g.fp32_lanes)},
      {"shared", c("shared_wavefronts") / (clock * g.shared_wavefronts)},
      {"l1", std::max(sectors / g.l1_sectors, lines / g.l1_lines) / clock},
  };
  Prediction p;
  p.bound = terms[0].first;
  p.seconds = terms[0].second;
  for (const auto& t : terms) {
    p.terms[t.first] = t.second;
    if (t.second > p.seconds) p.bound = t.first, p.seconds = t.second;
  }
  return p;
}

namespace {

/// Bytes of one PTX load: the vector width times the element type's size (".v4.f32": 16).
long long ptx_load_bytes(const std::string& op) {
  long long lanes = 1, size = 0;
  std::size_t pos = 0;
  while ((pos = op.find('.', pos)) != std::string::npos) {
    const std::size_t end = op.find('.', pos + 1);
    const std::string part = op.substr(pos + 1, end == std::string::npos ? std::string::npos : end - pos - 1);
    if (part == "v2") lanes = 2;
    else if (part == "v4") lanes = 4;
    else if (part == "v8") lanes = 8;
    else if (part.size() >= 2 && (part[0] == 'f' || part[0] == 'u' || part[0] == 's' || part[0] == 'b') &&
             std::isdigit(static_cast<unsigned char>(part[1])))
      size = std::stoll(part.substr(1)) / 8;
    pos = end == std::string::npos ? op.size() : end;
  }
  return lanes * size;
}

/// A global load of a kernel's PTX.
struct PtxLoad {
  std::size_t line;
  long long bytes;
  int file, source_line;
  int at_file, at_line;  // the call it is inlined into (-1: none)
  std::string place;  // "F:L:C" or "F:L:C@F:L:C", file indices resolved at the end
};
/// A kernel of a PTX file: its labels, branches and global loads, each by its line in the file.
struct PtxKernel {
  std::string name;
  std::map<std::string, std::size_t> labels;
  std::vector<std::pair<std::size_t, std::string>> branches;  // PTX line, target label
  std::vector<PtxLoad> loads;
};

/// Reads a PTX file's kernels, line by line: its .file directives, each .entry, and in a kernel
/// the source place of its instructions (.loc), its labels, branches and global loads.
struct PtxReader {
  std::vector<PtxKernel> kernels;
  std::map<int, std::string> files;  // .file index -> base name
  int loc_file = -1, loc_line = 0, at_file = -1, at_line = 0;
  std::string loc_place;

  void read(const std::string& ptx) {
    std::istringstream in(ptx);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line); ++n) {
      const std::size_t first = line.find_first_not_of(" \t");
      if (first == std::string::npos) continue;
      const std::string text = line.substr(first);
      if (text.compare(0, 2, "//") == 0 || file(text) || entry(text)) continue;
      if (kernels.empty() || loc(text)) continue;
      instruction(text, n);
    }
  }

  /// A .file directive: its index and base name (true when `text` is one).
  bool file(const std::string& text) {
    if (text.compare(0, 6, ".file\t") != 0 && text.compare(0, 6, ".file ") != 0) return false;
    std::istringstream f(text.substr(6));
    int index = 0;
    std::string name;
    if (f >> index >> name && name.size() >= 2) {
      name = name.substr(1, name.find('"', 1) - 1);
      files[index] = name.substr(name.find_last_of('/') + 1);
    }
    return true;
  }

  /// A kernel's .entry: the kernel read from here on (true when `text` is one).
  bool entry(const std::string& text) {
    const std::size_t entry = text.find(".entry ");
    if (entry == std::string::npos) return false;
    const std::size_t begin = text.find_first_not_of(' ', entry + 7);
    kernels.push_back({text.substr(begin, text.find_first_of("( \t", begin) - begin), {}, {}, {}});
    loc_file = -1;
    return true;
  }

  /// A .loc directive: the source place of the instructions after it (true when `text` is one).
  bool loc(const std::string& text) {
    if (text.compare(0, 4, ".loc") != 0) return false;
    std::istringstream l(text.substr(4));
    int column = 0;
    if (!(l >> loc_file >> loc_line >> column)) loc_file = -1;
    loc_place = std::to_string(loc_file) + ":" + std::to_string(loc_line) + ":" + std::to_string(column);
    at_file = -1;
    const std::size_t at = text.find("inlined_at");
    if (at != std::string::npos) {
      std::istringstream i(text.substr(at + 10));
      int c = 0;
      if (i >> at_file >> at_line >> c)
        loc_place += "@" + std::to_string(at_file) + ":" + std::to_string(at_line) + ":" + std::to_string(c);
      else
        at_file = -1;
    }
    return true;
  }

  /// A label, a branch or a global load of the kernel being read, at PTX line `n`.
  void instruction(std::string text, std::size_t n) {
    PtxKernel& k = kernels.back();
    if (text[0] == '$' && text.back() == ':') {
      k.labels[text.substr(0, text.size() - 1)] = n;
      return;
    }
    if (text[0] == '@') {  // a predicate
      const std::size_t space = text.find_first_of(" \t");
      text = space == std::string::npos ? std::string() : text.substr(space);
    }
    const std::size_t begin = text.find_first_not_of(" \t");
    if (begin == std::string::npos) return;
    text = text.substr(begin);
    const std::string mnemonic = text.substr(0, text.find_first_of(" \t"));
    if (mnemonic == "bra" || mnemonic == "bra.uni") {
      std::string target = text.substr(mnemonic.size());
      target.erase(0, target.find_first_not_of(" \t"));
      k.branches.emplace_back(n, target.substr(0, target.find_first_of("; \t")));
    } else if (mnemonic.compare(0, 10, "ld.global.") == 0) {
      k.loads.push_back({n, ptx_load_bytes(mnemonic), loc_file, loc_line, at_file, at_line, loc_place});
    }
  }
};

/// A kernel's loops: first line -> last line.
std::map<std::size_t, std::size_t> ptx_loops(const PtxKernel& k) {
  // A loop: a label and the last branch back to it from below.
  std::map<std::size_t, std::size_t> loops;  // first line -> last line
  for (const auto& [at, target] : k.branches) {
    const auto it = k.labels.find(target);
    if (it != k.labels.end() && it->second < at) loops[it->second] = std::max(loops[it->second], at);
  }
  return loops;
}

/// A kernel's loads grouped by the innermost loop each is in.
PtxLoads grouped_loads(const PtxKernel& k, const std::map<int, std::string>& files) {
  const std::map<std::size_t, std::size_t> loops = ptx_loops(k);
  // Each load in the innermost loop around it (the smallest range), or in none.
  std::map<std::size_t, PtxLoadGroup> groups;  // by the loop's first line; npos: no loop
  constexpr std::size_t kNoLoop = static_cast<std::size_t>(-1);
  for (const PtxLoad& l : k.loads) {
    std::size_t key = kNoLoop, size = kNoLoop;
    for (const auto& [lo, hi] : loops)
      if (lo < l.line && l.line < hi && hi - lo < size) key = lo, size = hi - lo;
    PtxLoadGroup& g = groups[key];
    g.in_loop = key != kNoLoop;
    g.bytes += l.bytes;
    ++g.loads;
    // Its line, and the line of the call it is inlined into (where a counter of accesses may
    // put it: a library's inline function is counted at its caller's line).
    for (const auto& [f, li] : {std::pair<int, int>{l.file, l.source_line}, {l.at_file, l.at_line}}) {
      const auto file = files.find(f);
      if (f < 0 || file == files.end()) continue;
      const std::string where = file->second + ":" + std::to_string(li);
      if (std::find(g.lines.begin(), g.lines.end(), where) == g.lines.end()) g.lines.push_back(where);
    }
    if (std::find(g.places.begin(), g.places.end(), l.place) == g.places.end()) g.places.push_back(l.place);
  }
  PtxLoads kl;
  kl.kernel = k.name;
  for (auto& [key, g] : groups) kl.groups.push_back(std::move(g));
  return kl;
}

}  // namespace

std::vector<PtxLoads> ptx_loads(const std::string& ptx) {
  PtxReader reader;
  reader.read(ptx);
  std::vector<PtxLoads> out;
  for (const PtxKernel& k : reader.kernels) out.push_back(grouped_loads(k, reader.files));
  return out;
}

const PtxLoadGroup* busiest_load_group(const std::vector<const PtxLoadGroup*>& groups,
                                       const std::map<std::string, long long>& requests_at, long long& weight,
                                       long long warps) {
  const PtxLoadGroup* best = nullptr;
  weight = 0;
  for (const PtxLoadGroup* g : groups) {
    long long w = 0;
    for (const std::string& line : g->lines)
      if (const auto it = requests_at.find(line); it != requests_at.end()) w += it->second;
    if (w <= 0 || w < weight) continue;
    if (w > weight || !best) {
      best = g, weight = w;
      continue;
    }
    auto sorted = [](std::vector<std::string> v) {
      std::sort(v.begin(), v.end());
      return v;
    };
    const bool same_loop = sorted(g->places) == sorted(best->places);
    if (!same_loop && warps > 0 && g->in_loop != best->in_loop) {
      // More requests than the loads in no loop can issue, once per warp: a loop issued them.
      const PtxLoadGroup* straight = g->in_loop ? best : g;
      if (w > static_cast<long long>(straight->loads) * warps) {
        if (g->in_loop) best = g;
        continue;
      }
    }
    if (same_loop ? g->bytes > best->bytes : g->bytes < best->bytes) best = g;
  }
  return best;
}

double read_bytes_per_s(const Gpu& g, double bytes_per_thread, double threads_per_sm) {
  if (g.name != "H200" || bytes_per_thread <= 0 || threads_per_sm <= 0) return 0;
  // GB/s by bytes per thread (rows: 4, 8, 16, 32, 64) and threads per SM (columns: 256, 512,
  // 1024, 2048): inflight.tsv, the faster of the two shapes where two give the same bytes.
  static const double grid[5][4] = {{377.1, 741.6, 1419.7, 2585.5},
                                    {619.4, 1208.3, 2212.8, 3583.7},
                                    {1327.0, 2427.6, 3776.5, 4350.4},
                                    {2092.4, 3482.6, 4289.8, 4432.0},
                                    {3257.7, 4233.5, 4433.1, 4437.2}};
  double scale = 1;  // Little's law below the grid
  double r = std::log2(bytes_per_thread / 4), c = std::log2(threads_per_sm / 256);
  if (r < 0) scale *= bytes_per_thread / 4, r = 0;
  if (c < 0) scale *= threads_per_sm / 256, c = 0;
  r = std::min(r, 4.0);
  c = std::min(c, 3.0);
  const int r0 = std::min(3, static_cast<int>(r)), c0 = std::min(2, static_cast<int>(c));
  const double fr = r - r0, fc = c - c0;
  const double v = (1 - fr) * ((1 - fc) * grid[r0][c0] + fc * grid[r0][c0 + 1]) +
                   fr * ((1 - fc) * grid[r0 + 1][c0] + fc * grid[r0 + 1][c0 + 1]);
  return v * 1e9 * scale;
}

namespace {

std::string upper_alnum(const std::string& s) {
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

/// The table's GPU whose name the device's contains ("NVIDIA H200" -> H200), or null.
const Gpu* known_gpu(const std::string& device) {
  for (const std::string& name : gpu_names())
    if (upper_alnum(device).find(upper_alnum(name)) != std::string::npos) return gpu(name);
  return nullptr;
}

}  // namespace

PeakRates peak_rates(const std::string& device, double memory_clock_hz, int memory_bus_bits, int multiprocessors,
                     double clock_hz, double l2_bytes) {
  PeakRates p;
  p.device = device;
  p.l2_bytes = l2_bytes;
  // Double data rate: two transfers per memory clock on every bit of the bus. 128 FP32 lanes per SM
  // (every NVIDIA GPU since compute capability 8.6; 64 before), an FMA being 2 operations.
  const double props_dram = memory_clock_hz * 2.0 * memory_bus_bits / 8.0;
  const double props_fp32 = multiprocessors * 128.0 * 2.0 * clock_hz;
  if (const Gpu* g = known_gpu(device)) {
    const PeakRates table = ceilings(*g);
    p.dram_bytes_per_s = std::max(table.dram_bytes_per_s, props_dram);
    p.fp32_flops = std::max(table.fp32_flops, props_fp32);
    p.source = "the larger of the " + g->name + "'s datasheet and the device's properties";
  } else {
    p.dram_bytes_per_s = 2 * props_dram;
    p.fp32_flops = 2 * props_fp32;
    p.source = "twice the device's properties (a GPU the grader's table lacks)";
  }
  return p;
}

double physical_floor_ms(const Work& work, const PeakRates& peak, std::string& why) {
  if (peak.dram_bytes_per_s <= 0 || peak.fp32_flops <= 0) {
    why = "the device's peak rates are not known";
    return 0;
  }
  const double bytes = work.read_bytes + std::max(0.0, work.written_bytes - peak.l2_bytes);
  const AtPeak least = at_peak(peak, work.flops, bytes);
  const double memory_ms = least.dram_seconds * 1e3, compute_ms = least.fp32_seconds * 1e3;
  std::ostringstream os;
  os.precision(3);
  if (memory_ms >= compute_ms)
    os << "moving " << bytes << " bytes (read, and written beyond the L2's " << peak.l2_bytes << ") at the "
       << peak.dram_bytes_per_s / 1e12 << " TB/s";
  else
    os << work.flops << " FP32 operations at the " << peak.fp32_flops / 1e12 << " TFLOP/s";
  os << " peak of an " << peak.device << " (" << peak.source << ") takes " << std::max(memory_ms, compute_ms) << " ms";
  why = os.str();
  return std::max(memory_ms, compute_ms);
}

}  // namespace gpulab::grade::perfmodel
