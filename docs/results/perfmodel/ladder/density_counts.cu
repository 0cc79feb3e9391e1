// docs/results/perfmodel/ladder/density_counts.cu - the instructions lab 05's reference density kernel
// executes per particle, counted on the emulator by the compiler pass (common/emu/passes), to set
// against the SASS instructions Nsight Compute counted on the H200 for the same kernel and
// scenario (2^21 particles; git show d98f299:docs/results/lab05-h200/ncu-instructions/ncu-density.csv).
//
//   perfmodel-density-counts [n] [seed]     (default 2097152, the grader's GPU size)
//
// The scenario is the grader's (grader/labs/05-particle-reorder/reference.hpp: n particles, about
// 84 within h of each, the state sorted by linear cell keys on the host); the kernel is the
// reference's sph_density over the reordered copy. Prints one TSV row: the counts by class, per
// particle, and the densities' largest error against the grader's float64 reference over the
// first 4096 particles (a count of a kernel that went wrong would be no count).
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "gpulab/emu/metrics.hpp"
#include "gpulab/host.hpp"
#include "particle_reorder.hpp"
#include "reference.hpp"

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1 << 21;
  const unsigned long long seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20261201ull;
  if (n < 1) {
    std::fprintf(stderr, "usage: %s [n >= 1] [seed]\n", argv[0]);
    return 2;
  }
  const lab05::Problem p = lab05::make_problem(n, std::mt19937_64(seed));
  const lab05::Sorted s = lab05::sorted_state(p, CellOrder::linear, std::mt19937_64(seed + 1));
  auto upload = [](const auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    auto* d = static_cast<T*>(gpulab::device_malloc(v.size() * sizeof(T)));
    gpulab::copy_to_device(d, v.data(), v.size() * sizeof(T));
    return d;
  };
  float4* pos = upload(p.position);
  float4* spos = upload(s.sorted_position);
  int* index = upload(s.sorted_index);
  unsigned* start = upload(s.cell_start);
  auto* density = static_cast<float*>(gpulab::device_malloc(static_cast<std::size_t>(n) * sizeof(float)));
  gpulab::emu::reset_instruction_counts();
  sph_density(pos, index, spos, start, n, p.grid, CellOrder::linear, density);
  gpulab::synchronize();
  const auto ic = gpulab::emu::instruction_counts();
  // The densities of the first particles against the grader's reference (its tolerance).
  const int checked = n < 4096 ? n : 4096;
  std::vector<float> got(static_cast<std::size_t>(n));
  gpulab::copy_to_host(got.data(), density, got.size() * sizeof(float));
  const lab05::DensityReference ref = lab05::density_reference(p, s);
  double worst = 0;
  for (int k = 0; k < checked; ++k) {
    const double e = std::fabs(got[k] - ref.value[k]) / ref.tolerance[k];
    if (!(e <= worst)) worst = e;
  }
  // Candidates: the particles of the (up to) 27 cells around each particle's cell, itself included.
  long long candidates = 0;
  for (int k = 0; k < n; ++k) {
    int c[3];
    lab05::cell_of(s.sorted_position[k], p.grid, c);
    for (int z = c[2] - 1; z <= c[2] + 1; ++z)
      for (int y = c[1] - 1; y <= c[1] + 1; ++y)
        for (int x = c[0] - 1; x <= c[0] + 1; ++x) {
          if (x < 0 || y < 0 || z < 0 || x >= p.grid.gx || y >= p.grid.gy || z >= p.grid.gz) continue;
          const unsigned key = lab05::key_of(x, y, z, p.grid, CellOrder::linear);
          candidates += s.cell_start[key + 1] - s.cell_start[key];
        }
  }
  namespace in = gpulab::emu::instr;
  std::printf("n\tfma\tfp32\tinteger\tload\tstore\tbranch\tconvert\tspecial\ttotal\ttotal_per_particle\tcandidates\ttotal_per_candidate\terror_over_tolerance\n");
  std::printf("%d\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%.1f\t%lld\t%.2f\t%.3g\n", n, ic[in::fma32], ic[in::fp32],
              ic[in::integer], ic[in::load], ic[in::store], ic[in::branch], ic[in::convert], ic[in::special],
              ic[in::total], static_cast<double>(ic[in::total]) / n, candidates,
              static_cast<double>(ic[in::total]) / static_cast<double>(candidates), worst);
  return worst <= 1 ? 0 : 1;
}
