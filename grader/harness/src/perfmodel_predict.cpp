// gpulab-perfmodel-predict: the grader's performance model (gpulab/grade/perfmodel.hpp) from the
// command line, for the scripts of docs/results/perfmodel/ (model.py reads and formats what it
// prints; the model has no other implementation). Each command prints a TSV with a header line.
//
//   gpulab-perfmodel-predict gpus
//       Every GPU the model has parameters for (perfmodel::gpu_names(), the validated one first):
//       each parameter of perfmodel::Gpu, and the FP32 peak (fp32_peak_flops).
//   gpulab-perfmodel-predict ladder COUNTS.tsv RESOURCES.tsv [--gpu NAME] [--n N] [--l2-latency CYCLES]
//       One row per step of COUNTS.tsv (perfmodel-ladder-counts), with its registers and shared
//       memory from RESOURCES.tsv (resources.py): v1's time at N^3 (predict_sgemm; N: 4096), what
//       bounds it, blocks per SM and what limits them, warps per SM; v0's time and bound (the
//       slowest of five whole-GPU ceilings, kept to compare: perfmodel.md); and the warp
//       instructions of the counts as counted (warp_instructions, at the counted size). GPU: H200.
//       --l2-latency replaces the GPU's L2 latency (cycles).
//   gpulab-perfmodel-predict occupancy RESOURCES.tsv [--gpu NAME]
//       Blocks per SM (CU) of each row's kernel (columns max_threads, registers, shared_bytes) and
//       what limits them (perfmodel::occupancy); on a GPU with SIMDs also the waves on the busiest
//       SIMD (blocks x waves / SIMDs, rounded up, at most the SIMD's), as AMD's compiler states it.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/grade/perfmodel.hpp"

namespace pm = gpulab::grade::perfmodel;

namespace {

using Row = std::map<std::string, std::string>;

std::vector<Row> read_tsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<std::string> header;
  std::vector<Row> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::istringstream f(line);
    for (std::string x; std::getline(f, x, '\t');) fields.push_back(x);
    if (header.empty()) {
      header = fields;
      continue;
    }
    Row r;
    for (std::size_t i = 0; i < header.size() && i < fields.size(); ++i) r[header[i]] = fields[i];
    rows.push_back(r);
  }
  return rows;
}

const std::string& field(const Row& r, const std::string& name) {
  const auto it = r.find(name);
  if (it == r.end()) throw std::runtime_error("a row has no column " + name);
  return it->second;
}

/// The command's options (--gpu, --n, --l2-latency) and its other arguments, in order.
struct Args {
  std::vector<std::string> positional;
  std::string gpu = "H200";
  int n = 4096;
  double l2_latency = -1;
};

Args parse(int argc, char** argv, int first) {
  Args a;
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--gpu" || arg == "--n" || arg == "--l2-latency") {
      if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      const std::string v = argv[++i];
      if (arg == "--gpu") a.gpu = v;
      else if (arg == "--n") a.n = std::stoi(v);
      else a.l2_latency = std::stod(v);
    } else {
      a.positional.push_back(arg);
    }
  }
  return a;
}

pm::Gpu gpu_of(const Args& a) {
  const pm::Gpu* g = pm::gpu(a.gpu);
  if (!g) throw std::runtime_error("no parameters for the GPU " + a.gpu);
  pm::Gpu copy = *g;
  if (a.l2_latency >= 0) copy.l2_latency_cycles = a.l2_latency;
  return copy;
}

int gpus() {
  std::printf("name\tmeasured\tsms\tclock_hz\tschedulers\tfp32_lanes\tshared_wavefronts\tl1_sectors\tl1_lines\t"
              "dram_bytes_per_s\tregs_per_sm\treg_unit\tmax_warps\tmax_blocks\tshared_per_sm\tshared_reserved\t"
              "l2_latency_cycles\tcopy_bytes_per_s\tstore_sector_seconds\tstore_line_seconds\twarp\tsimds\t"
              "fp32_peak_flops\n");
  for (const std::string& name : pm::gpu_names()) {
    const pm::Gpu& g = *pm::gpu(name);
    std::printf("%s\t%d\t%d\t%.17g\t%d\t%d\t%d\t%d\t%d\t%.17g\t%d\t%d\t%d\t%d\t%lld\t%lld\t%.17g\t%.17g\t%.17g\t%.17g\t%d\t%d\t%.17g\n",
                g.name.c_str(), g.measured ? 1 : 0, g.sms, g.clock_hz, g.schedulers, g.fp32_lanes,
                g.shared_wavefronts, g.l1_sectors, g.l1_lines, g.dram_bytes_per_s, g.regs_per_sm, g.reg_unit,
                g.max_warps, g.max_blocks, g.shared_per_sm, g.shared_reserved, g.l2_latency_cycles,
                g.copy_bytes_per_s, g.store_sector_seconds, g.store_line_seconds, g.warp, g.simds,
                pm::fp32_peak_flops(g));
  }
  return 0;
}

/// v0, the model's first version (perfmodel.md): the slowest of five ceilings for the whole GPU,
/// issue, FP32, shared wavefronts, L1 sectors and the DRAM moving the three matrices once; counts
/// scaled as predict_sgemm scales them. Kept only to state what v1 gained.
std::pair<double, std::string> predict_v0(const pm::Counts& counted, const pm::Gpu& g, int n, int big_n) {
  const double s2 = (static_cast<double>(big_n) / n) * (static_cast<double>(big_n) / n), s3 = s2 * big_n / n;
  pm::Counts c;
  for (const auto& [k, v] : counted)
    c[k] = v * (k == "global_store_requests" || k == "global_store_sectors" ? s2 : s3);
  auto get = [&](const char* k) { return c.count(k) ? c.at(k) : 0.0; };
  const double clock = g.clock_hz * g.sms;
  const std::pair<const char*, double> ceilings[] = {
      {"issue", pm::warp_instructions(c, g) / (clock * g.schedulers)},
      {"fp32", get("fma") / (clock * g.fp32_lanes)},
      {"shared", get("shared_wavefronts") / (clock * g.shared_wavefronts)},
      {"l1", (get("global_load_sectors") + get("global_store_sectors")) / (clock * g.l1_sectors)},
      {"dram", 3.0 * big_n * big_n * 4 / g.dram_bytes_per_s},
  };
  auto top = ceilings[0];
  for (const auto& kv : ceilings)
    if (kv.second > top.second) top = kv;
  return {top.second, top.first};
}

int ladder(const Args& a) {
  if (a.positional.size() != 2) throw std::runtime_error("ladder needs COUNTS.tsv RESOURCES.tsv");
  const pm::Gpu g = gpu_of(a);
  std::map<std::string, Row> resources;
  for (const Row& r : read_tsv(a.positional[1])) resources[field(r, "step")] = r;
  std::printf("step\tseconds\tbound\tblocks_per_sm\tlimit\twarps_per_sm\tv0_seconds\tv0_bound\twarp_instructions\n");
  for (const Row& r : read_tsv(a.positional[0])) {
    pm::Counts c;
    for (const auto& [k, v] : r)
      if (k != "step" && k != "n") c[k] = std::stod(v);
    const std::string& step = field(r, "step");
    const auto res = resources.find(step);
    if (res == resources.end()) throw std::runtime_error("no resources for step " + step);
    const int n = std::stoi(field(r, "n"));
    const pm::Prediction p = pm::predict_sgemm(c, std::stoi(field(res->second, "registers")),
                                               std::stoll(field(res->second, "shared_bytes")), g, n, a.n);
    const long long threads = static_cast<long long>(c["threads_per_block"]);
    const long long warps_per_block = (threads + g.warp - 1) / g.warp;
    const auto [v0_seconds, v0_bound] = predict_v0(c, g, n, a.n);
    std::printf("%s\t%.17g\t%s\t%d\t%s\t%lld\t%.17g\t%s\t%.17g\n", step.c_str(), p.seconds, p.bound.c_str(),
                p.blocks_per_sm, p.limit.c_str(), p.blocks_per_sm * warps_per_block, v0_seconds, v0_bound.c_str(),
                pm::warp_instructions(c, g));
  }
  return 0;
}

int occupancy(const Args& a) {
  if (a.positional.size() != 1) throw std::runtime_error("occupancy needs RESOURCES.tsv");
  const pm::Gpu g = gpu_of(a);
  std::printf("step\tthreads\tregisters\tshared_bytes\tblocks_per_sm\twarps_per_block\tlimit\twaves_per_simd\n");
  for (const Row& r : read_tsv(a.positional[0])) {
    const long long threads = std::stoll(field(r, "max_threads"));
    const int registers = std::stoi(field(r, "registers"));
    const long long shared = std::stoll(field(r, "shared_bytes"));
    std::string limit;
    const int blocks = pm::occupancy(g, threads, registers, shared, limit);
    const long long warps = (threads + g.warp - 1) / g.warp;
    std::string per_simd = "-";
    if (g.simds > 0)
      per_simd = std::to_string(std::min<long long>(g.max_warps / g.simds, (blocks * warps + g.simds - 1) / g.simds));
    std::printf("%s\t%lld\t%d\t%lld\t%d\t%lld\t%s\t%s\n", field(r, "step").c_str(), threads, registers, shared, blocks,
                warps, limit.c_str(), per_simd.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  try {
    const Args a = parse(argc, argv, 2);
    if (command == "gpus" && a.positional.empty()) return gpus();
    if (command == "ladder") return ladder(a);
    if (command == "occupancy") return occupancy(a);
    std::fprintf(stderr,
                 "usage: %s gpus\n"
                 "       %s ladder COUNTS.tsv RESOURCES.tsv [--gpu NAME] [--n N] [--l2-latency CYCLES]\n"
                 "       %s occupancy RESOURCES.tsv [--gpu NAME]\n",
                 argv[0], argv[0], argv[0]);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
}
