// gpulab/grade/inputs.hpp - large random inputs, made fast and the same on any machine, and
// exact (compensated) sums of them: for checks whose inputs reach 2^28 elements.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <random>
#include <system_error>
#include <thread>
#include <vector>

namespace gpulab::grade::kit {

/// The check's generator (rng()), or for `set` > 0 another stream of it: rng() starts from the
/// same state at every call of a check, and two data sets of one check must differ.
std::mt19937_64 generator(int set);

/// The key of the next input of the running check: rng() is the same for every call of a check,
/// so each call also mixes in its own number (the runner and the judge make the same calls in the
/// same order, so they draw the same inputs).
std::uint64_t fresh_key();

/// Element i's 64 random bits under `key` (splitmix64's finaliser of key + i): independent of the
/// other elements, so an input of 2^28 elements is filled by several threads, the same on any
/// machine, in a fraction of the time a sequential generator takes (std::mt19937_64 with
/// uniform_real_distribution: 7.3 s for 2^28 floats on a 2-core machine like CI's).
inline std::uint64_t bits_at(std::uint64_t key, std::uint64_t i) {
  std::uint64_t z = key + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Uniform reals in [lo, hi) drawn from a 64-bit engine: the same values, draw for draw, as
/// libstdc++'s std::uniform_real_distribution<T>(lo, hi) (one draw scaled by 2^-64, then
/// r * (hi - lo) + lo), without the two logl calls per draw that made it 8x slower (60 ns against
/// 8 ns a value; 18% of a lab 01 grade on the emulator), and the same with any standard library.
/// Use it like the distribution: UniformReal<float> d{-1.0f, 1.0f}; x = d(gen);
template <class T>
struct UniformReal {
  T lo, hi;
  T operator()(std::mt19937_64& gen) const {
    T r = static_cast<T>(gen() - std::mt19937_64::min()) / static_cast<T>(0x1p64L);
    if (r >= T(1)) r = std::nextafter(T(1), T(0));  // a 64-bit draw rounded up to 1 in float
    return r * (hi - lo) + lo;
  }
};

/// Elements per chunk of the work on large inputs (generation, sums): fixed, so that results do
/// not depend on the machine's number of threads.
inline constexpr long long kChunk = 1LL << 22;

inline long long chunk_count(long long n) { return (n + kChunk - 1) / kChunk; }

/// Runs body(chunk, begin, end) over [0, n) in chunks of kChunk on up to 8 threads (one when thread
/// creation is refused, e.g. by a process limit). Results must not depend on which thread ran a
/// chunk: every caller writes per element or per chunk.
template <class Body>
void for_chunks(long long n, Body body) {
  const long long chunks = chunk_count(n);
  std::atomic<long long> next{0};
  auto work = [&] {
    for (long long c; (c = next.fetch_add(1)) < chunks;) body(c, c * kChunk, std::min(n, (c + 1) * kChunk));
  };
  const long long want = std::min<long long>({chunks, 8, std::max(1u, std::thread::hardware_concurrency())});
  std::vector<std::thread> helpers;
  for (long long t = 1; t < want; ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // the caller's thread does the rest
    }
  }
  work();
  for (auto& h : helpers) h.join();
}

/// The exact sum of floats (to double precision: Neumaier's compensated summation in double, per
/// chunk and then over the chunks' sums in order, the same result on any machine; error far below
/// float's unit roundoff) and the sum of their absolute values.
struct ExactSum {
  double sum = 0, abs_sum = 0;
};
ExactSum exact_sum(const std::vector<float>& x);

}  // namespace gpulab::grade::kit
