// Forges the judge's verdicts: before any check runs, a static initializer appends "check ... 1"
// protocol lines for every planned check to the verdict files the judge will append to later
// (../verdicts-32.tsv and ../verdicts-64.tsv, ../verdicts-0.tsv on a GPU, next to the lab process's working directory), so
// that the forged verdicts come first. The kernel itself is the slow thread-per-row stub.
// defence: symbols,sandbox,verdict-file
// expect: lab fail
// expect: performance fail
#include <cstdio>
#include <string>

#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

__global__ void row_sum_thread_per_row(const float* m, float* sums, int n) {
  const int row = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (row >= n) return;
  float s = 0.0f;
  for (int col = 0; col < n; ++col) s += m[static_cast<long long>(row) * n + col];
  sums[row] = s;
}

const char* const kChecks[][2] = {
    {"correctness.tiny_sizes", "correctness"},          {"correctness.block_size_boundaries", "correctness"},
    {"correctness.prime_and_random_sizes", "correctness"}, {"correctness.exact_on_integer_inputs", "correctness"},
    {"correctness.fresh_inputs_every_call", "correctness"}, {"sanitizer.no_memory_errors_or_races", "sanitizer"},
    {"performance.coalesced_global_loads", "performance"}, {"performance.predicted_fraction_of_copy", "performance"}};
// A GPU's plan (verdicts-0): the same correctness checks, no sanitizer, its own performance check.
const char* const kGpuChecks[][2] = {
    {"correctness.tiny_sizes", "correctness"},          {"correctness.block_size_boundaries", "correctness"},
    {"correctness.prime_and_random_sizes", "correctness"}, {"correctness.exact_on_integer_inputs", "correctness"},
    {"correctness.fresh_inputs_every_call", "correctness"}, {"performance.bandwidth_vs_copy", "performance"}};

template <std::size_t N>
void forge(const char* path, const char* const (&checks)[N][2], bool performance) {
  std::FILE* f = std::fopen(path, "a");
  if (!f) return;
  for (const auto& c : checks)
    if (performance || std::string(c[1]) != "performance")
      std::fprintf(f, "check\t%s\t%s\t1\t1\t0.8\tload efficiency\tall good\n", c[0], c[1]);
  std::fclose(f);
}

const bool forged = [] {
  forge("../verdicts-32.tsv", kChecks, true);
  forge("../verdicts-64.tsv", kChecks, false);
  forge("../verdicts-0.tsv", kGpuChecks, true);
  return true;
}();

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  gpulab::launch(row_sum_thread_per_row, (n + 255) / 256, 256, 0, m, sums, n);
}
