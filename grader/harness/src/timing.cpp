// GPU timing through Google Benchmark with manual (event) timing.
#include "gpulab/grade/timing.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "gpulab/host.hpp"

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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

Timing time_device(const std::string& name, const std::function<void(int)>& run) {
  // Warm-up: module load, first-touch and clocks ramping up stay out of the numbers.
  for (int i = 0; i < 3; ++i) run(i);
  synchronize();
  Event start, stop;
  std::vector<double> samples;
  int iteration = 0;
  // Rounds of 7 repetitions until the median's relative standard error is under 1% (at most
  // 5 rounds): the estimate 1.253 * sd / sqrt(n) holds for roughly normal run-to-run noise.
  for (int round = 0; round < 5; ++round) {
    benchmark::ClearRegisteredBenchmarks();
    benchmark::RegisterBenchmark(name.c_str(), [&](benchmark::State& state) {
      for (auto _ : state) {
        flusher().flush();
        start.record();
        run(iteration++);
        stop.record();
        state.SetIterationTime(stop.elapsed_ms_since(start) / 1e3);
      }
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
