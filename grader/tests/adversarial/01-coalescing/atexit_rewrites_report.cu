// Rewrites the report from an atexit handler: when the lab process ends, it reads the grader's
// --json path from /proc/<parent>/cmdline and writes a fake all-passed report over it. The kernel
// is the slow thread-per-row stub.
// defence: symbols,sandbox
// expect: lab fail
// expect: correctness fail "no exit handlers or signals"
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

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

const char kFakeReport[] =
    "{\"complete\": true, \"passed\": true, \"score\": 10, \"max_score\": 10, \"labs\": [{\"lab\": \"01-coalescing\","
    " \"impl\": \"submission\", \"status\": \"graded\", \"passed\": true, \"score\": 10, \"max_score\": 10,"
    " \"checks\": []}]}\n";

// The grader's --json path, from the command line of the process that started this one.
std::string report_path_of_parent() {
  std::ifstream in("/proc/" + std::to_string(getppid()) + "/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string a; std::getline(in, a, '\0');) args.push_back(a);
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--json") return args[i + 1];
  return {};
}

void write_fake_report(const std::string& path) {
  if (path.empty()) return;
  std::ofstream(path, std::ios::trunc) << kFakeReport;
}

std::string g_report;

void rewrite_report() { write_fake_report(g_report); }

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  static const bool registered = [] {
    g_report = report_path_of_parent();
    return std::atexit(rewrite_report) == 0;
  }();
  (void)registered;
  gpulab::launch(row_sum_thread_per_row, (n + 255) / 256, 256, 0, m, sums, n);
}
