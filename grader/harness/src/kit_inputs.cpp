// The lab kit's random inputs and exact sums (gpulab/grade/inputs.hpp).
#include "gpulab/grade/inputs.hpp"

#include <cmath>
#include <string>

#include "gpulab/grade/harness.hpp"

namespace gpulab::grade::kit {
namespace {

/// One step of Neumaier's compensated summation: s += v, the rounding error gathered in k.
void neumaier_add(double& s, double& k, double v) {
  const double t = s + v;
  k += std::fabs(s) >= std::fabs(v) ? (s - t) + v : (v - t) + s;
  s = t;
}

}  // namespace

std::mt19937_64 generator(int set) {
  auto gen = rng();
  if (set > 0) gen.seed(gen() + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(set));
  return gen;
}

std::uint64_t fresh_key() {
  static std::string check;
  static std::uint64_t call = 0;
  const std::string name = current_check();
  if (name != check) check = name, call = 0;
  std::mt19937_64 base = rng();
  return base() ^ (0x9E3779B97F4A7C15ull * ++call);
}

ExactSum exact_sum(const std::vector<float>& x) {
  const long long n = static_cast<long long>(x.size());
  std::vector<ExactSum> part(static_cast<std::size_t>(chunk_count(n)));
  std::vector<double> comp(part.size());
  for_chunks(n, [&](long long c, long long b, long long e) {
    double s = 0, k = 0, a = 0;
    for (long long i = b; i < e; ++i) {
      const double v = x[static_cast<std::size_t>(i)];
      neumaier_add(s, k, v);
      a += std::fabs(v);
    }
    part[static_cast<std::size_t>(c)] = {s, a};
    comp[static_cast<std::size_t>(c)] = k;
  });
  double s = 0, k = 0, a = 0;
  for (std::size_t c = 0; c < part.size(); ++c) {
    neumaier_add(s, k, part[c].sum);
    neumaier_add(s, k, comp[c]);
    a += part[c].abs_sum;
  }
  return {s + k, a};
}

}  // namespace gpulab::grade::kit
