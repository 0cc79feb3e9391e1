// Tracing observes, it does not change: the traced and the plain build of the same kernels
// compute bit-identical results, at both warp sizes.
#include <gtest/gtest.h>

#include <vector>

#include "emu_test_util.hpp"
#include "gpulab/emu/metrics.hpp"
#include "twin_kernels.hpp"

class Tracing : public EmuTest {};
INSTANTIATE_TEST_SUITE_P(WarpSizes, Tracing, ::testing::Values(32, 64),
                         [](const auto& info) { return "warp" + std::to_string(info.param); });

TEST_P(Tracing, DoesNotChangeResults) {
  const int n = 128;
  std::vector<float> h(n * n);
  for (int i = 0; i < n * n; ++i) h[i] = static_cast<float>(i % 97) * 0.37f - 11.0f;
  gpulab::DeviceBuffer<float> in(h);
  std::vector<std::vector<float>> results[2];
  const TwinKernels twins[2] = {traced_kernels(), plain_kernels()};
  for (int v = 0; v < 2; ++v) {
    gpulab::DeviceBuffer<float> a(n * n), b(16), c(4 * 256), d(4 * 64);
    twins[v].transpose(in.data(), a.data(), n);
    twins[v].reduce(in.data(), b.data(), n * n, 16);
    twins[v].barriers(c.data(), 4, 256, 5);
    twins[v].shuffles(d.data(), 4, 64, 7);
    results[v] = {a.download(), b.download(), c.download(), d.download()};
  }
  EXPECT_EQ(results[0], results[1]);
  gpulab::emu::reset_metrics();
  gpulab::emu::reset_findings();
}
