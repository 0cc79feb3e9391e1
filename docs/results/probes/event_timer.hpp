// docs/results/probes/event_timer.hpp - median_event_ms: the standalone CUDA probes' timer. One warm-up
// run (unless `warm_up` is false), then `runs` timed runs between two CUDA events, each after
// `before()` (an L2 flush, or nothing); returns the median in milliseconds (0 for no runs).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "cuda_check.hpp"

template <class Run, class Before>
double median_event_ms(Run run, int runs, bool warm_up, Before before) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  if (warm_up) run();
  std::vector<double> t;
  for (int r = 0; r < runs; ++r) {
    before();
    CHECK(cudaEventRecord(a));
    run();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  if (t.empty()) return 0;
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
