// docs/results/perfmodel/ladder/sgemm_counter.cpp - see sgemm_counter.hpp.
#include "sgemm_counter.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <iterator>
#include <random>

#include "gpulab/emu/metrics.hpp"
#include "gpulab/emu/watch.hpp"
#include "gpulab/host.hpp"

namespace perfmodel {
namespace {

/// The counts of the watch's launches, summed (a step launches one kernel; more are reported).
gpulab::emu::LaunchCounts summed(const std::vector<gpulab::emu::LaunchShape>& shapes) {
  gpulab::emu::LaunchCounts sum;
  for (const auto& shape : shapes) {
    for (const auto& f : gpulab::emu::kLaunchCountFields) sum.*f.member += shape.counts.*f.member;
    for (std::size_t i = 0; i < std::size(sum.instructions); ++i) sum.instructions[i] += shape.counts.instructions[i];
  }
  return sum;
}

}  // namespace

int size_argument(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 256;
  if (n < 1) {
    std::fprintf(stderr, "usage: %s [n >= 1]%s\n", argv[0], argc > 2 ? " [name]" : "");
    return 0;
  }
  if (!gpulab::emu::metrics_available()) {
    std::fprintf(stderr, "%s: built without the emulator's access tracing (needs clang)\n", argv[0]);
    return 0;
  }
  return n;
}

SgemmCounter::SgemmCounter(int n) : n_(n), elems_(static_cast<std::size_t>(n) * n) {
  std::vector<float> a(elems_), b(elems_);
  std::mt19937 rng(20261201);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  // The float64 product, and each element's error bound (K terms: gamma_K * sum |a||b|).
  want_.resize(elems_);
  bound_.resize(elems_);
  for (int i = 0; i < n_; ++i)
    for (int j = 0; j < n_; ++j) {
      double s = 0, m = 0;
      for (int k = 0; k < n_; ++k) {
        s += static_cast<double>(a[static_cast<std::size_t>(i) * n_ + k]) * b[static_cast<std::size_t>(k) * n_ + j];
        m += std::fabs(static_cast<double>(a[static_cast<std::size_t>(i) * n_ + k]) * b[static_cast<std::size_t>(k) * n_ + j]);
      }
      want_[static_cast<std::size_t>(i) * n_ + j] = s;
      const double g = n_ * 0x1p-24 / (1 - n_ * 0x1p-24);
      bound_[static_cast<std::size_t>(i) * n_ + j] = 2 * g * m + 1e-30;
    }
  const std::size_t bytes = elems_ * sizeof(float);
  da_ = static_cast<float*>(gpulab::device_malloc(bytes));
  db_ = static_cast<float*>(gpulab::device_malloc(bytes));
  dc_ = static_cast<float*>(gpulab::device_malloc(bytes));
  gpulab::copy_to_device(da_, a.data(), bytes);
  gpulab::copy_to_device(db_, b.data(), bytes);
}

SgemmCounter::~SgemmCounter() {
  gpulab::device_free(da_);
  gpulab::device_free(db_);
  gpulab::device_free(dc_);
}

void SgemmCounter::print_header() {
  std::printf("step\tn\tfma\tfp32\tinteger\tload\tstore\tbranch\tconvert\tspecial\ttotal\t"
              "global_load_requests\tglobal_load_sectors\tglobal_store_requests\tglobal_store_sectors\t"
              "shared_requests\tshared_wavefronts\tshared_load_requests\tshared_load_wavefronts\t"
              "global_load_lines\tblocks\tthreads_per_block\tbarriers_per_block\tshared_loads_under_global_load\n");
}

bool SgemmCounter::row(const char* name, SgemmFn run) {
  const int n = n_;
  const std::size_t bytes = elems_ * sizeof(float);
  std::vector<float> c(elems_);
  gpulab::fill_bytes(dc_, 0xff, bytes);  // NaN: a step that skips an element fails the check
  gpulab::synchronize();
  gpulab::emu::reset_metrics();
  gpulab::emu::reset_instruction_counts();
  gpulab::emu::begin_watch();
  run(n, n, n, 1.0f, da_, db_, 0.0f, dc_);
  gpulab::synchronize();
  gpulab::emu::end_watch();
  // The step's launch (each step launches one kernel once at tile multiples).
  const auto shapes = gpulab::emu::launch_shapes();
  const gpulab::emu::LaunchShape shape = shapes.empty() ? gpulab::emu::LaunchShape{} : shapes.back();
  const gpulab::emu::LaunchCounts t = summed(shapes);
  const double barriers_per_block = shape.blocks ? static_cast<double>(t.barriers) / shape.blocks : 0;
  const long long* ic = t.instructions;
  gpulab::copy_to_host(c.data(), dc_, bytes);
  long bad = 0;
  for (std::size_t i = 0; i < elems_; ++i)
    if (!(std::fabs(c[i] - want_[i]) <= bound_[i])) ++bad;
  if (bad) {
    std::fprintf(stderr, "%s: %ld of %zu elements wrong at n = %d\n", name, bad, elems_, n);
    return false;
  }
  namespace in = gpulab::emu::instr;
  if (shapes.size() != 1) std::fprintf(stderr, "%s: %zu launches (one expected)\n", name, shapes.size());
  std::printf("%.*s\t%d\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%g\t%.4f\n",
              static_cast<int>(std::strcspn(name, " ")), name, n, ic[in::fma32], ic[in::fp32], ic[in::integer], ic[in::load], ic[in::store],
              ic[in::branch], ic[in::convert], ic[in::special], ic[in::total], t.global_load_requests,
              t.global_load_sectors, t.global_store_requests, t.global_store_sectors, t.shared_requests,
              t.shared_wavefronts, t.shared_load_requests, t.shared_load_wavefronts, t.global_load_lines,
              shape.blocks, shape.threads_per_block, barriers_per_block,
              t.shared_load_lanes ? static_cast<double>(t.shared_load_lanes_under_global) / t.shared_load_lanes : 0.0);
  std::fflush(stdout);
  return true;
}

}  // namespace perfmodel
