// solutions/06-sgemm/bench/sgemm_tune.cu - the search that chose the reference's tile shape:
// times every configuration of sgemm_tiled_kernel.cuh listed below, with several tile orders
// (raster_rows), at one size (default 4096^3) against cuBLAS in the same run.
//
//   sgemm_tune [--n 4096] [--rasters 1,4,8,16,32] [--budget-ms 200] [--min-runs 10] [--write FILE]
//
// --write FILE (solutions/06-sgemm/sgemm_configs.hpp; `./gpulab tune --write` passes it): the
// fastest correct configuration becomes the reference's LargeConfig and its raster order the
// reference's, with a comment naming this GPU and the speed measured (bench/tuned_config.hpp).
// Rebuild afterwards; SmallConfig (for problems that do not fill the GPU) is left as it is.
//
// (run with --n 1024 and --n 2048 too: the reference picks a smaller tile for problems
// whose 128 x 128 tiles are too few to fill the GPU)
//
// Each configuration is first checked against cuBLAS (relative error <= 1e-4 on a NaN-
// poisoned C), then timed like the ladder (L2 flushed before each timed run, GPU events,
// median). The table, sorted by speed, is what docs/results/sgemm-h200.md records; the winner
// goes into solutions/06-sgemm/sgemm.cu.
//
// Why these shapes: a block tile of 128 x 128 or larger reuses each loaded element 128+ times;
// thread tiles of 8 x 8 (64 accumulators, <= 128 registers, 2 blocks of 256 threads per SM)
// or 8 x 16 / 16 x 8 (128 accumulators, fewer shared loads per FMA, fewer warps) trade
// occupancy against instruction-level parallelism; BK = 8 or 16 trades barriers per FMA
// against shared memory and staging registers. Static shared memory caps a block at 48 KB,
// which rules out 256-wide tiles with BK = 16.
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <fstream>

#include "bench_common.hpp"
#include "sgemm_tiled_kernel.cuh"
#include "tuned_config.hpp"

namespace {

struct Result {
  std::string config, args;  ///< the name, and the TileConfig's template arguments
  int threads, raster;
  double ms, tflops, percent, error;
  bool ok;
};

struct Context {
  sgemm_bench::Problem* p;
  sgemm_bench::L2Flusher* flusher;
  std::vector<int> rasters;
  double budget_ms, ref_tflops;
  int min_runs;
  std::vector<Result> results;
};

template <class Cfg>
void tune(const char* name, Context& ctx) {
  sgemm_bench::Problem& p = *ctx.p;
  auto run = [&](int raster) {
    const int tiles = (p.M / Cfg::BM) * (p.N / Cfg::BN);
    gpulab::launch(sgemm_ref::sgemm_tiled<Cfg, sgemm_ref::Bounds::kNone>, tiles, Cfg::kThreads, 0,
                   p.M, p.N, p.K, 1.0f, p.A.data(), p.B.data(), 0.0f, p.C.data(), raster);
  };
  if (sgemm_ref::bounds_for<Cfg>(p.M, p.N, p.K, p.A.data(), p.B.data(), p.C.data()) !=
      sgemm_ref::Bounds::kNone) {
    std::printf("  %-34s skipped: %d is not a multiple of its tiles\n", name, p.M);
    return;
  }
  p.C.poison();
  run(ctx.rasters.front());
  gpulab::synchronize();
  const sgemm_bench::ErrorReport err =
      sgemm_bench::relative_error(p.C.data(), p.Cref.data(), p.C.size());
  for (const int raster : ctx.rasters) {
    const sgemm_bench::Timing t =
        sgemm_bench::time_gpu([&] { run(raster); }, *ctx.flusher, ctx.budget_ms, ctx.min_runs,
                              200);
    const double tf = sgemm_bench::tflops(p.M, p.N, p.K, t.median_ms);
    const std::string args = std::to_string(Cfg::BM) + ", " + std::to_string(Cfg::BN) + ", " +
                             std::to_string(Cfg::BK) + ", " + std::to_string(Cfg::WM) + ", " +
                             std::to_string(Cfg::WN) + ", " + std::to_string(Cfg::TM) + ", " +
                             std::to_string(Cfg::TN) + ", " + std::to_string(Cfg::kMinBlocks);
    ctx.results.push_back({name, args, Cfg::kThreads, raster, t.median_ms, tf,
                           100.0 * tf / ctx.ref_tflops, err.relative, err.ok(1e-4)});
    std::printf("  %-34s %4d thr raster %3d: %8.3f ms %6.2f TFLOP/s %6.1f%%%s\n", name,
                Cfg::kThreads, raster, t.median_ms, tf, 100.0 * tf / ctx.ref_tflops,
                err.ok(1e-4) ? "" : "  WRONG");
    std::fflush(stdout);
  }
}

// BM x BN x BK, warp tile WM x WN, thread tile TM x TN, min blocks per SM.
#define TUNE(BM, BN, BK, WM, WN, TM, TN, MINB)                                           \
  tune<sgemm_ref::TileConfig<BM, BN, BK, WM, WN, TM, TN, MINB>>(                           \
      #BM "x" #BN "x" #BK " w" #WM "x" #WN " t" #TM "x" #TN " b" #MINB, ctx)

void tune_all(Context& ctx) {
  // 256 threads, 8 x 8 per thread, 2 blocks per SM (<= 128 registers).
  TUNE(128, 128, 8, 32, 64, 8, 8, 2);
  TUNE(128, 128, 8, 64, 32, 8, 8, 2);
  TUNE(128, 128, 16, 32, 64, 8, 8, 2);
  TUNE(128, 128, 16, 64, 32, 8, 8, 2);
  TUNE(64, 256, 16, 32, 64, 8, 8, 2);
  TUNE(256, 64, 16, 64, 32, 8, 8, 2);
  // 128 threads, 8 x 16 or 16 x 8 per thread (128 accumulators, <= 255 registers).
  TUNE(128, 128, 8, 64, 64, 8, 16, 2);
  TUNE(128, 128, 8, 64, 64, 16, 8, 2);
  TUNE(128, 128, 16, 64, 64, 8, 16, 2);
  TUNE(128, 128, 16, 64, 64, 16, 8, 2);
  TUNE(128, 128, 8, 32, 128, 8, 16, 2);
  TUNE(128, 128, 8, 128, 32, 16, 8, 2);
  // The two fastest shapes with BK = 16 (half the barriers per FMA) or with the register cap
  // lifted (1 block per SM: up to 255 registers without the 2-block bound's spills, if any).
  TUNE(128, 128, 16, 32, 128, 8, 16, 2);
  TUNE(128, 128, 8, 32, 128, 8, 16, 1);
  TUNE(128, 128, 8, 64, 64, 8, 16, 1);
  TUNE(128, 256, 8, 32, 128, 8, 16, 1);
  // 256 threads, 128 accumulators each, 1 block per SM.
  TUNE(128, 256, 8, 64, 64, 8, 16, 1);
  TUNE(256, 128, 8, 64, 64, 16, 8, 1);
  // 512 threads, 8 x 8 each, 1 block per SM.
  TUNE(128, 256, 8, 32, 64, 8, 8, 1);
  TUNE(256, 128, 8, 64, 32, 8, 8, 1);
  // Smaller tiles, for sizes whose 128 x 128 tiles cannot fill the 132 SMs twice over:
  // 128 threads with 8 x 8 each, or 32-64 threads with 8 x 16 each.
  TUNE(64, 128, 8, 32, 64, 8, 8, 4);
  TUNE(128, 64, 8, 64, 32, 8, 8, 4);
  TUNE(64, 64, 8, 32, 32, 8, 4, 4);
  TUNE(64, 64, 8, 32, 32, 4, 8, 4);
  TUNE(64, 128, 8, 64, 64, 8, 16, 4);
  TUNE(128, 64, 8, 64, 64, 8, 16, 4);
  TUNE(64, 64, 8, 64, 64, 8, 16, 8);
}

/// Rewrites `path` (sgemm_configs.hpp) with the fastest correct result (results are sorted).
bool write_winner(const std::string& path, const std::vector<Result>& results, const std::string& gpu, int n,
                  double cublas_tflops) {
  const auto best = std::find_if(results.begin(), results.end(), [](const Result& r) { return r.ok; });
  if (best == results.end()) {
    std::fprintf(stderr, "--write: no configuration computed the right result; %s left as it was\n", path.c_str());
    return false;
  }
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  char note[256];
  std::snprintf(note, sizeof note, "%s, %d^3: %.2f TFLOP/s = %.1f%% of cuBLAS's %.2f (%s, raster %d).", gpu.c_str(), n,
                best->tflops, best->percent, cublas_tflops, best->config.c_str(), best->raster);
  try {
    const std::string out = sgemm_tuned::rewrite(text.str(), best->args, best->raster, note);
    std::ofstream(path) << out;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "--write: %s: %s\n", path.c_str(), e.what());
    return false;
  }
  std::printf("\nwrote %s: LargeConfig = TileConfig<%s>, kRasterRows = %d (%s)\n", path.c_str(), best->args.c_str(),
              best->raster, note);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 4096, min_runs = 10;
  double budget_ms = 200;
  std::string write;  // sgemm_configs.hpp to rewrite with the winner, or none
  std::vector<int> rasters = {1, 4, 8, 16, 32};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--n") n = std::stoi(argv[i + 1]);
    else if (a == "--budget-ms") budget_ms = std::stod(argv[i + 1]);
    else if (a == "--min-runs") min_runs = std::stoi(argv[i + 1]);
    else if (a == "--write") write = argv[i + 1];
    else if (a == "--rasters") {
      rasters.clear();
      std::stringstream in(argv[i + 1]);
      std::string item;
      while (std::getline(in, item, ',')) rasters.push_back(std::stoi(item));
    } else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  const gpulab::DeviceInfo dev = gpulab::device_info();
  std::printf("SGEMM tile search on %s (%d SMs), %d^3\n", dev.name.c_str(), dev.multiprocessors, n);
  cublasHandle_t handle = sgemm_bench::make_cublas();
  sgemm_bench::L2Flusher flusher;
  sgemm_bench::Problem p(n, n, n, 7);
  sgemm_bench::cublas_sgemm_row_major(handle, n, n, n, 1.0f, p.A.data(), p.B.data(), 0.0f,
                                      p.Cref.data());
  auto time_cublas = [&] {
    return sgemm_bench::time_gpu(
        [&] {
          sgemm_bench::cublas_sgemm_row_major(handle, n, n, n, 1.0f, p.A.data(), p.B.data(),
                                              0.0f, p.C.data());
        },
        flusher, budget_ms, min_runs, 200);
  };
  const sgemm_bench::Timing tc = time_cublas();
  const double ref = sgemm_bench::tflops(n, n, n, tc.median_ms);
  std::printf("cuBLAS: %.3f ms = %.2f TFLOP/s\n", tc.median_ms, ref);

  Context ctx{&p, &flusher, rasters, budget_ms, ref, min_runs, {}};
  tune_all(ctx);

  // cuBLAS again: if the clocks moved during the search, the two cuBLAS times disagree.
  const sgemm_bench::Timing tc2 = time_cublas();
  cublasDestroy(handle);
  std::sort(ctx.results.begin(), ctx.results.end(),
            [](const Result& a, const Result& b) { return a.tflops > b.tflops; });
  std::printf("\ncuBLAS before / after the search: %.2f / %.2f TFLOP/s\n", ref,
              sgemm_bench::tflops(n, n, n, tc2.median_ms));
  std::printf("| config (BMxBNxBK, warp, thread, blocks/SM) | threads | raster | ms | TFLOP/s | "
              "%% of cuBLAS | ok |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  bool all_ok = true;
  for (const Result& r : ctx.results) {
    std::printf("| %s | %d | %d | %.3f | %.2f | %.1f | %s |\n", r.config.c_str(), r.threads,
                r.raster, r.ms, r.tflops, r.percent, r.ok ? "yes" : "WRONG");
    all_ok = all_ok && r.ok;
  }
  if (!write.empty()) return write_winner(write, ctx.results, dev.name, n, ref) && all_ok ? 0 : 1;
  return all_ok ? 0 : 1;
}
