// gpulab/grade/timing.hpp - honest GPU timing for the performance checks.
//
// GPU events around each run, warm-up first, the L2 cache flushed before every timed run (a
// buffer of twice the L2 size is overwritten), many runs through Google Benchmark with manual
// timing, the median kept, and runs added until the relative standard error of the median is
// small. Performance is then judged as a ratio against a ceiling measured in the same process
// (copy bandwidth, the vendor library), never as an absolute time.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace gpulab::grade {

struct Timing {
  double median_ms = 0;
  double rse = 0;      ///< relative standard error of the median (bootstrap-free estimate)
  int samples = 0;     ///< timed runs behind the median
};

/// Times device work. `run(i)` enqueues the i-th run (use i to rotate among input sets so that
/// repeated runs do not find their inputs in a cache); it must not synchronize.
Timing time_device(const std::string& name, const std::function<void(int)>& run);

/// Bandwidth of a float4 copy kernel moving `bytes` (counting bytes read + bytes written), in
/// bytes per second: the ceiling a memory-bound kernel is compared with.
double copy_bandwidth(std::size_t bytes_read_and_written);

}  // namespace gpulab::grade
