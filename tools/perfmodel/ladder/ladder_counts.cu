// tools/perfmodel/ladder_counts.cpp - what the emulator counts for each step of lab 06's SGEMM
// ladder (solutions/06-sgemm/steps), the input of the performance model (tools/perfmodel/model.py).
//
//   perfmodel-ladder-counts [n]     (default 256: every step takes its fast path at multiples of 128)
//
// Step 10 (the reference) picks its tile shape by size: at n where the 128 x 128 tiles are fewer
// than an H200's 132 SMs (n < 1,470) it runs its small 64 x 64 tiles. The row "10" is its large
// shape, the one the H200's ladder measures at 4096^3; "10s" is the shape it picks at this n.
//
// Per step, one n x n x n product on the emulator with its access tracing and the instruction-
// counting pass (tools/perfmodel/count_pass.cpp): one TSV row with the instructions the emulated
// threads executed by class, the global sectors and requests of loads and stores, and the shared
// memory requests and wavefronts. Each product's result is checked against a float64 product, so
// a row never describes a kernel that went wrong.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "gpulab/emu/metrics.hpp"
#include "gpulab/emu/watch.hpp"
#include "gpulab/host.hpp"
#include "sgemm_configs.hpp"
#include "steps.hpp"

namespace {

struct Traffic {
  long long global_load_lines = 0, shared_load_lanes = 0, shared_load_lanes_under_global = 0;
  long long global_load_requests = 0, global_load_sectors = 0, global_store_requests = 0,
            global_store_sectors = 0, shared_requests = 0, shared_wavefronts = 0, shared_load_requests = 0,
            shared_load_wavefronts = 0;
};

Traffic traffic() {
  Traffic t;
  for (const auto& m : gpulab::emu::metrics_by_line()) {
    if (m.shared) {
      t.shared_requests += m.requests;
      t.shared_wavefronts += m.units;
      if (!m.store) {
        t.shared_load_requests += m.requests;
        t.shared_load_wavefronts += m.units;
        t.shared_load_lanes += m.lane_accesses;
        t.shared_load_lanes_under_global += m.under_global_load;
      }
    } else if (m.store) {
      t.global_store_requests += m.requests;
      t.global_store_sectors += m.units;
    } else {
      t.global_load_requests += m.requests;
      t.global_load_sectors += m.units;
      t.global_load_lines += m.lines;
    }
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 256;
  if (n < 1) {
    std::fprintf(stderr, "usage: %s [n >= 1]\n", argv[0]);
    return 2;
  }
  if (!gpulab::emu::metrics_available()) {
    std::fprintf(stderr, "%s: built without the emulator's access tracing (needs clang)\n", argv[0]);
    return 1;
  }
  const std::size_t elems = static_cast<std::size_t>(n) * n;
  std::vector<float> a(elems), b(elems), c(elems);
  std::mt19937 rng(20261201);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  // The float64 product, and each element's error bound (K terms: gamma_K * sum |a||b|).
  std::vector<double> want(elems), bound(elems);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0, m = 0;
      for (int k = 0; k < n; ++k) {
        s += static_cast<double>(a[static_cast<std::size_t>(i) * n + k]) * b[static_cast<std::size_t>(k) * n + j];
        m += std::fabs(static_cast<double>(a[static_cast<std::size_t>(i) * n + k]) * b[static_cast<std::size_t>(k) * n + j]);
      }
      want[static_cast<std::size_t>(i) * n + j] = s;
      const double g = n * 0x1p-24 / (1 - n * 0x1p-24);
      bound[static_cast<std::size_t>(i) * n + j] = 2 * g * m + 1e-30;
    }
  const std::size_t bytes = elems * sizeof(float);
  auto* da = static_cast<float*>(gpulab::device_malloc(bytes));
  auto* db = static_cast<float*>(gpulab::device_malloc(bytes));
  auto* dc = static_cast<float*>(gpulab::device_malloc(bytes));
  gpulab::copy_to_device(da, a.data(), bytes);
  gpulab::copy_to_device(db, b.data(), bytes);
  std::printf("step\tn\tfma\tfp32\tinteger\tload\tstore\tbranch\tconvert\tspecial\ttotal\t"
              "global_load_requests\tglobal_load_sectors\tglobal_store_requests\tglobal_store_sectors\t"
              "shared_requests\tshared_wavefronts\tshared_load_requests\tshared_load_wavefronts\t"
              "global_load_lines\tblocks\tthreads_per_block\tbarriers_per_block\tshared_loads_under_global_load\n");
  int failures = 0;
  struct Row {
    const char* name;
    sgemm_steps::SgemmFn run;
  };
  std::vector<Row> rows;
  for (const auto& step : sgemm_steps::kLadder) {
    if (step.run == sgemm_step10_final) {
      rows.push_back({"10 final, large tiles", [](int M, int N, int K, float alpha, const float* A, const float* B,
                                                  float beta, float* C) {
                        sgemm_ref::launch_tiled<sgemm_ref::LargeConfig>(M, N, K, alpha, A, B, beta, C,
                                                                        sgemm_ref::kRasterRows);
                      }});
      rows.push_back({"10s final, as picked at this n", step.run});
    } else {
      rows.push_back({step.name, step.run});
    }
  }
  for (const auto& step : rows) {
    gpulab::fill_bytes(dc, 0xff, bytes);  // NaN: a step that skips an element fails the check
    gpulab::synchronize();
    gpulab::emu::reset_metrics();
    gpulab::emu::reset_instruction_counts();
    gpulab::emu::begin_watch();
    step.run(n, n, n, 1.0f, da, db, 0.0f, dc);
    gpulab::synchronize();
    gpulab::emu::end_watch();
    // The step's launch (each step launches one kernel once at tile multiples).
    const auto shapes = gpulab::emu::launch_shapes();
    const gpulab::emu::LaunchShape shape = shapes.empty() ? gpulab::emu::LaunchShape{} : shapes.back();
    const double barriers_per_block = shape.blocks ? static_cast<double>(gpulab::emu::kernel_barriers()) / shape.blocks : 0;
    const auto ic = gpulab::emu::instruction_counts();
    const Traffic t = traffic();
    gpulab::copy_to_host(c.data(), dc, bytes);
    long bad = 0;
    for (std::size_t i = 0; i < elems; ++i)
      if (!(std::fabs(c[i] - want[i]) <= bound[i])) ++bad;
    if (bad) {
      std::fprintf(stderr, "%s: %ld of %zu elements wrong at n = %d\n", step.name, bad, elems, n);
      ++failures;
      continue;
    }
    namespace in = gpulab::emu::instr;
    if (shapes.size() != 1) std::fprintf(stderr, "%s: %zu launches (one expected)\n", step.name, shapes.size());
    std::printf("%.*s\t%d\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%g\t%.4f\n",
                step.name[2] == 's' ? 3 : 2, step.name, n, ic[in::fma32], ic[in::fp32], ic[in::integer], ic[in::load], ic[in::store],
                ic[in::branch], ic[in::convert], ic[in::special], ic[in::total], t.global_load_requests,
                t.global_load_sectors, t.global_store_requests, t.global_store_sectors, t.shared_requests,
                t.shared_wavefronts, t.shared_load_requests, t.shared_load_wavefronts, t.global_load_lines,
                shape.blocks, shape.threads_per_block, barriers_per_block,
                t.shared_load_lanes ? static_cast<double>(t.shared_load_lanes_under_global) / t.shared_load_lanes : 0.0);
    std::fflush(stdout);
  }
  gpulab::device_free(da);
  gpulab::device_free(db);
  gpulab::device_free(dc);
  return failures ? 1 : 0;
}
