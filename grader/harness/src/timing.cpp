// GPU timing through Google Benchmark with manual (event) timing.
#include "gpulab/grade/timing.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "gpulab/grade/defences.hpp"
#include "gpulab/host.hpp"
#if defined(GPULAB_BUILD_BACKEND_CUDA)
#include <cuda_runtime.h>
#endif

namespace gpulab::grade {
namespace {

/// Collects each repetition's mean time per iteration (milliseconds).
class Collector : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs)
      if (r.run_type == Run::RT_Iteration && r.iterations > 0)
        ms.push_back(r.GetAdjustedRealTime() * 1e3 /
                     benchmark::GetTimeUnitMultiplier(r.time_unit));
  }
  std::vector<double> ms;
};

/// A buffer twice the size of the L2, overwritten before each timed run.
class L2Flusher {
 public:
  L2Flusher() {
    const std::size_t l2 = device_info().l2_bytes;
    bytes_ = std::max<std::size_t>(2 * l2, 8u << 20);
    buffer_ = device_malloc(bytes_);
  }
  ~L2Flusher() { device_free(buffer_); }
  void flush() { fill_bytes(buffer_, ++value_ & 0xFF, bytes_); }

 private:
  void* buffer_ = nullptr;
  std::size_t bytes_ = 0;
  int value_ = 0;
};

L2Flusher& flusher() {
  static L2Flusher f;
  return f;
}

/// The least time from an event on the default stream to an event recorded after a device-wide
/// synchronisation that follows it, with no work in between: what a run's second end (see
/// time_device) has on top of the moment the device went idle, at the least.
double round_trip_ms() {
  synchronize();
  double least = INFINITY;
  for (int i = 0; i < 16; ++i) {
    Event idle, seen;
    idle.record();
    synchronize();
    seen.record();
    least = std::min(least, static_cast<double>(seen.elapsed_ms_since(idle)));
  }
  return least;
}

/// The events of the timed runs, made once.
struct RunEvents {
  Event start, stop, idle;
};

/// One timed run: from `start` to the later of the default stream's end and the device's.
double timed_run(const std::function<void(int)>& run, int i, double round_trip, RunEvents& e) {
  Event &start = e.start, &stop = e.stop, &idle = e.idle;
  start.record();
  run(i);
  stop.record();
  if (!defence_enabled("device-sync")) return stop.elapsed_ms_since(start);
  synchronize();  // every stream of the device, the code under test's own included
  idle.record();
  const double on_stream = stop.elapsed_ms_since(start), on_device = idle.elapsed_ms_since(start) - round_trip;
  return std::max(on_stream, on_device);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

void reset_l2_persistence() {
#if defined(GPULAB_BUILD_BACKEND_CUDA)
  if (!defence_enabled("l2-persistence")) return;
  // GPUs without a persisting L2 (before compute capability 8.0) refuse the limit: nothing to reset.
  static bool supported = true;
  if (!supported) return;
  std::size_t set_aside = 0;
  if (cudaDeviceGetLimit(&set_aside, cudaLimitPersistingL2CacheSize) != cudaSuccess) {
    supported = false;
    (void)cudaGetLastError();
    return;
  }
  if (set_aside != 0 && cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0) != cudaSuccess)
    throw Error("timing", "resetting the L2's persisting set-aside to 0 failed: " +
                              std::string(cudaGetErrorString(cudaGetLastError())));
  if (cudaCtxResetPersistingL2Cache() != cudaSuccess)
    throw Error("timing", "resetting the L2's persisting lines failed: " +
                              std::string(cudaGetErrorString(cudaGetLastError())));
#endif
}

namespace {

/// Run i with its hooks, the L2 reset and flushed first; its time.
double hooked_run(const std::function<void(int)>& run, const RunHooks& hooks, int i, double round_trip, RunEvents& e) {
  if (hooks.before) hooks.before(i);
  reset_l2_persistence();
  flusher().flush();
  // The device idle at the start: work on another stream cannot begin during the flush.
  if (defence_enabled("device-sync")) synchronize();
  const double ms = timed_run(run, i, round_trip, e);
  if (hooks.after) {
    synchronize();
    hooks.after(i);
  }
  return ms;
}

}  // namespace

Timing time_device(const std::string& name, const std::function<void(int)>& run, const RunHooks& hooks) {
  const double round_trip = round_trip_ms();
  RunEvents events;
  // Warm-up: module load, first-touch and clocks ramping up stay out of the numbers.
  for (int i = 0; i < 3; ++i) hooked_run(run, hooks, i, round_trip, events);
  synchronize();
  std::vector<double> samples;
  int iteration = 3;
  // Rounds of 7 repetitions until the median's relative standard error is under 1% (at most
  // 5 rounds): the estimate 1.253 * sd / sqrt(n) holds for roughly normal run-to-run noise.
  for (int round = 0; round < 5; ++round) {
    benchmark::ClearRegisteredBenchmarks();
    benchmark::RegisterBenchmark(name.c_str(), [&](benchmark::State& state) {
      for (auto _ : state) state.SetIterationTime(hooked_run(run, hooks, iteration++, round_trip, events) / 1e3);
    })->UseManualTime()->MinTime(0.02)->Repetitions(7)->ReportAggregatesOnly(false);
    Collector c;
    benchmark::RunSpecifiedBenchmarks(&c);
    samples.insert(samples.end(), c.ms.begin(), c.ms.end());
    const double m = median(samples);
    double var = 0;
    for (double s : samples) var += (s - m) * (s - m);
    const double sd = std::sqrt(var / std::max<std::size_t>(1, samples.size() - 1));
    const double rse = 1.253 * sd / std::sqrt(static_cast<double>(samples.size())) / m;
    if (rse < 0.01 || round == 4) {
      benchmark::ClearRegisteredBenchmarks();
      return Timing{m, rse, static_cast<int>(samples.size())};
    }
  }
  return {};
}

}  // namespace gpulab::grade
