// Edits the grader's files at run time: appends a lower threshold to the lab's rubric.ini (the
// judge reads it after this process), a passing check to lab 06's checks.cpp and a line to the
// build's lab manifest (gpulab-labs.tsv), all found from --rubric on its command line. The kernel
// is the slow thread-per-row stub. (Safety catch for the suite: it only tries when its parent is
// pid 1, i.e. inside a pid namespace, so an undefended run on a machine without one touches nothing.)
// defence: symbols
// expect: lab fail
// expect: correctness fail "no files or network"
#include <unistd.h>

#include <fstream>
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

std::string g_rubric;

[[gnu::constructor]] void find_rubric(int argc, char** argv, char**) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--rubric") g_rubric = argv[i + 1];
}

void edit_the_grader() {
  if (g_rubric.empty() || getppid() != 1) return;
  const std::string lab_dir = g_rubric.substr(0, g_rubric.rfind('/'));  // grader/labs/01-coalescing
  const std::string labs = lab_dir.substr(0, lab_dir.rfind('/'));
  std::ofstream(g_rubric, std::ios::app) << "\n[performance.emu]\nmin_load_efficiency = 0.01\n";
  std::ofstream(labs + "/06-sgemm/checks.cpp", std::ios::app) << "\nTEST(correctness, bonus) { SUCCEED(); }\n";
  std::ofstream("../../../gpulab-labs.tsv", std::ios::app) << "01-coalescing\t.\t.\t.\t.\trow_sum.cu\trow_sum\n";
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  static const bool edited = (edit_the_grader(), true);
  (void)edited;
  gpulab::launch(row_sum_thread_per_row, (n + 255) / 256, 256, 0, m, sums, n);
}
