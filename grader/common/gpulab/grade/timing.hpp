// gpulab/grade/timing.hpp - honest GPU timing for the performance checks.
//
// GPU events around each run, warm-up first, the L2 cache flushed before every timed run (a
// buffer of twice the L2 size is overwritten) and its persisting lines reset (a persisting
// access-policy window would survive the flush), many runs through Google Benchmark with manual
// timing, the median kept, and runs added until the relative standard error of the median is
// small. A run ends when the whole device is idle, not when the default stream is: work the
// timed code launched on streams of its own is inside its time. Performance is then judged as a
// ratio against a ceiling measured in the same process (copy bandwidth, the vendor library),
// never as an absolute time.
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

/// Work around each run that stays outside its time (kit::TimedCall): `before(i)` before run i's
/// L2 flush (restoring its inputs, poisoning its outputs), `after(i)` once run i's work is done on
/// the whole device (reading its outputs back).
struct RunHooks {
  std::function<void(int)> before, after;
};

/// Times device work. `run(i)` enqueues the i-th run (use i to rotate among input sets so that
/// repeated runs do not find their inputs in a cache); it must not synchronize. Runs 0-2 are the
/// warm-up (hooks included), the timed runs follow.
///
/// A run's time is from an event before it to the moment the device is idle: the stop event on the
/// default stream right after the run gives the precise time of work on that stream (and on the
/// streams it waits for); a device-wide synchronisation and a second event then bound the end of
/// work on any other stream. The second event comes a host round trip late: the least such round
/// trip, measured around no work before the runs, is taken off, and the later of the two ends
/// kept. Defences `device-sync` (the second end) and `l2-persistence` (runner side).
Timing time_device(const std::string& name, const std::function<void(int)>& run, const RunHooks& hooks = {});

/// Runner on a GPU back-end: no L2 lines set aside for persisting accesses, and every persisting
/// line back to normal (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0),
/// cudaCtxResetPersistingL2Cache), so that the next flush evicts them. Nothing where the runtime
/// has no such cache (HIP, the emulator, GPUs before compute capability 8.0).
void reset_l2_persistence();

/// Bandwidth of a float4 copy kernel moving `bytes` (counting bytes read + bytes written), in
/// bytes per second: the ceiling a memory-bound kernel is compared with.
double copy_bandwidth(std::size_t bytes_read_and_written);

}  // namespace gpulab::grade
