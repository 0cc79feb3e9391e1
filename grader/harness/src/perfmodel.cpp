// The grader's performance model (gpulab/grade/perfmodel.hpp): a line-by-line port of
// tools/perfmodel/model.py's occupancy() and predict_v1(), whose header explains each term.
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
  // programming guide); the L2's latency measured on an H200 (tools/perfmodel/probes/latency.cu).
  // The copy bandwidth: the grader's float4 copy kernel on an H200 at 512 MiB (lab 03's reports,
  // docs/results/lab03-h200/verdicts-cuda/: 3.87e12 bytes/s).
  static const Gpu h200{"H200", 132, 1.98e9, 4, 128, 1, 4, 1, 4.8e12, 65536, 256, 64, 32, 233472, 1024, 288, 3.87e12};
  if (name == h200.name) return &h200;
  return nullptr;
}

int occupancy(const Gpu& g, long long threads, int registers, long long shared_bytes, std::string& limit) {
  const long long warps = ceil_div(threads, 32);
  const long long per_warp = ceil_div(static_cast<long long>(registers) * 32, g.reg_unit) * g.reg_unit;
  std::vector<std::pair<std::string, long long>> limits{
      {"warps", g.max_warps / warps}, {"blocks", g.max_blocks}, {"registers", g.regs_per_sm / std::max(1LL, per_warp * warps)}};
  if (shared_bytes) limits.push_back({"shared memory", g.shared_per_sm / (shared_bytes + g.shared_reserved)});
  auto best = limits.begin();
  for (auto it = limits.begin(); it != limits.end(); ++it)
    if (it->second < best->second) best = it;
  limit = best->first;
  return static_cast<int>(best->second);
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
  const double warps = static_cast<double>(ceil_div(threads, 32));
  const double per_sm = std::ceil(blocks / g.sms);
  const double lines = scaled("global_load_lines") + scaled("global_store_requests");
  const double sectors = scaled("global_load_sectors") + scaled("global_store_sectors");
  const double fp32 = scaled("fma") / g.fp32_lanes / blocks;
  const double shared = scaled("shared_wavefronts") / g.shared_wavefronts / blocks;
  const double l1 = std::max(sectors / g.l1_sectors, lines / g.l1_lines) / blocks;
  // Warp instructions: non-memory thread instructions / 32, plus one per warp-level request.
  const double warp_instr = ((scaled("total") - scaled("load") - scaled("store")) / 32 + scaled("global_load_requests") +
                             scaled("global_store_requests") + scaled("shared_requests")) /
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
  const double warp_instr = (c("total") - c("load") - c("store")) / 32 + c("global_load_requests") +
                            c("global_store_requests") + c("shared_requests");
  const double sectors = c("global_load_sectors") + c("global_store_sectors");
  const double lines = c("global_load_lines") + c("global_store_lines");
  const std::pair<const char*, double> terms[] = {
      {"dram", dram_bytes * scale / g.copy_bytes_per_s},
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

}  // namespace

std::vector<PtxLoads> ptx_loads_per_trip(const std::string& ptx) {
  std::vector<PtxLoads> out;
  std::istringstream in(ptx);
  struct Load {
    std::size_t line;
    long long bytes;
  };
  std::string kernel;
  std::map<std::string, std::size_t> labels;
  std::vector<std::pair<std::size_t, std::string>> branches;  // line, target
  std::vector<Load> loads;
  auto finish = [&] {
    if (kernel.empty()) return;
    // Loops: a branch back to a label above it.
    std::vector<std::pair<std::size_t, std::size_t>> loops;
    for (const auto& [at, target] : branches) {
      const auto it = labels.find(target);
      if (it != labels.end() && it->second < at) loops.emplace_back(it->second, at);
    }
    PtxLoads k;
    k.kernel = kernel;
    for (const auto& [lo, hi] : loops) {
      bool inner = true;
      for (const auto& [lo2, hi2] : loops)
        if ((lo2 != lo || hi2 != hi) && lo <= lo2 && hi2 <= hi) inner = false;
      if (!inner) continue;
      long long bytes = 0;
      int count = 0;
      for (const Load& l : loads)
        if (l.line > lo && l.line < hi) bytes += l.bytes, ++count;
      if (count && bytes > k.bytes_per_trip) k.bytes_per_trip = bytes, k.loads_per_trip = count, k.in_loop = true;
    }
    if (!k.in_loop)
      for (const Load& l : loads) k.bytes_per_trip += l.bytes, ++k.loads_per_trip;
    out.push_back(k);
    kernel.clear();
    labels.clear();
    branches.clear();
    loads.clear();
  };
  std::size_t n = 0;
  for (std::string line; std::getline(in, line); ++n) {
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    const std::string text = line.substr(first);
    const std::size_t entry = text.find(".entry ");
    if (entry != std::string::npos && text.compare(0, 2, "//") != 0) {
      finish();
      const std::size_t name = text.find_first_not_of(' ', entry + 7);
      kernel = text.substr(name, text.find_first_of("( \t", name) - name);
      continue;
    }
    if (kernel.empty()) continue;
    if (text[0] == '$' && text.back() == ':') {
      labels[text.substr(0, text.size() - 1)] = n;
      continue;
    }
    std::string op = text;
    if (op[0] == '@') {  // a predicate
      const std::size_t space = op.find_first_of(" \t");
      op = space == std::string::npos ? std::string() : op.substr(space);
    }
    const std::size_t begin = op.find_first_not_of(" \t");
    if (begin == std::string::npos) continue;
    op = op.substr(begin);
    const std::string mnemonic = op.substr(0, op.find_first_of(" \t"));
    if (mnemonic == "bra" || mnemonic == "bra.uni") {
      std::string target = op.substr(mnemonic.size());
      target.erase(0, target.find_first_not_of(" \t"));
      target = target.substr(0, target.find_first_of("; \t"));
      branches.emplace_back(n, target);
    } else if (mnemonic.compare(0, 10, "ld.global.") == 0) {
      loads.push_back({n, ptx_load_bytes(mnemonic)});
    }
  }
  finish();
  return out;
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

}  // namespace gpulab::grade::perfmodel
