// Untraced twins (common/emu/passes/twin_pass.cpp): this file is built with the twin pass, so every
// function in it has a copy without access hooks, which the emulator runs in blocks outside the
// sample of GPULAB_EMU_CHECKS=sample. The results must not change; only the sampled blocks feed
// the metrics.
#include <gtest/gtest.h>

#include <vector>

#include "emu_test_util.hpp"
#include "gpulab/emu/metrics.hpp"

extern "C" void* gpulab_emu_plain_twin(void* function);

namespace emu = gpulab::emu;

namespace {

float twice(float x) { return 2.0f * x; }

/// out[i] = op(in[i]), op called through a pointer (a twin must reach op's twin through it).
__global__ void apply(const float* in, float* out, int n, float (*op)(float)) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = op(in[i]);
}

long long load_requests() {
  long long r = 0;
  for (const auto& m : emu::metrics_by_line())
    if (!m.shared && !m.store) r += m.requests;
  return r;
}

}  // namespace

TEST(Twins, EveryFunctionOfTheFileHasOne) {
  EXPECT_NE(gpulab_emu_plain_twin(reinterpret_cast<void*>(&twice)), reinterpret_cast<void*>(&twice));
  EXPECT_NE(gpulab_emu_plain_twin(reinterpret_cast<void*>(&load_requests)), reinterpret_cast<void*>(&load_requests));
  int not_a_function = 0;
  EXPECT_EQ(gpulab_emu_plain_twin(&not_a_function), &not_a_function);
}

TEST(Twins, SampledLaunchComputesEveryBlockAndMeasuresOnlyTheSample) {
  const int threads = 256, blocks = 4096, n = threads * blocks;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = static_cast<float>(i % 1000);
  gpulab::DeviceBuffer<float> in(h), out(n);
  for (bool sample : {true, false}) {
    SCOPED_TRACE(sample ? "sampled" : "every block checked");
    emu::set_check_sampling(sample);
    emu::reset_metrics();
    const emu::CheckCoverage before = emu::check_coverage();
    gpulab::fill_bytes(out.data(), 0xff, out.bytes());
    gpulab::launch(apply, blocks, threads, 0, in.data(), out.data(), n, &twice);
    gpulab::synchronize();
    const std::vector<float> got = out.download();
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += got[i] != 2.0f * h[i];
    EXPECT_EQ(wrong, 0);
    const long long checked = emu::check_coverage().checked_blocks - before.checked_blocks;
    // One load request per warp of a checked block (in[i]).
    EXPECT_EQ(load_requests(), checked * (threads / 32));
    if (sample) {
      // The first and the last block, and two drawn from the others (which may coincide).
      EXPECT_GE(checked, 3);
      EXPECT_LE(checked, 4);
    } else {
      EXPECT_EQ(checked, blocks);
    }
  }
  emu::set_check_sampling(false);
}
