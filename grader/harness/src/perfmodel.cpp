// The grader's performance model (gpulab/grade/perfmodel.hpp): a line-by-line port of
// tools/perfmodel/model.py's occupancy() and predict_v1(), whose header explains each term.
#include "gpulab/grade/perfmodel.hpp"

#include <algorithm>
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

}  // namespace gpulab::grade::perfmodel
