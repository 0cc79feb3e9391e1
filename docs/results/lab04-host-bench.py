#!/usr/bin/env python3
"""Host-side cost of lab 04's inputs at n = 2^28: the checks' generators and compensated sum and
the kit's input digest as they are now (taken from grader/labs/04-reductions/checks.cpp and
grader/harness/src/kit.cpp at run time) against the versions before 2026-12-01 (std::mt19937_64
with <random>'s distributions, a sequential sum, byte-wise FNV-1a, written out below), each on a
fresh 1 GiB vector, twice; first with glibc's default (large blocks mapped and unmapped), then
with freed memory kept in the heap, as the lab processes now do (mallopt in harness.cpp).

    python3 docs/results/lab04-host-bench.py        (needs g++; about a minute; 2.5 GiB of memory)
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PRELUDE = r"""
#include <malloc.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <system_error>
#include <thread>
#include <vector>
struct Exact { double sum = 0, abs_sum = 0; };
constexpr double kExactLimit = 16777216.0;
std::uint64_t fresh_key() { return 12345; }  // the checks derive it from the seed and the call
"""

BEFORE = r"""
std::vector<float> old_random(long long n, std::mt19937_64 gen) {
  std::uniform_real_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (float& v : x) v = d(gen);
  return x;
}
std::vector<float> old_integer(long long n, std::mt19937_64 gen) {
  std::vector<float> x(static_cast<std::size_t>(n));
  std::bernoulli_distribution one(8388608.0 / static_cast<double>(n));
  double total = 0;
  for (long long i = 0; i < n; ++i) {
    const bool forced = i < 64 || i >= n - 64 || (i & 1023) == 0 || (i & 1023) == 1023;
    const bool set = (forced || one(gen)) && total < kExactLimit - 1;
    x[static_cast<std::size_t>(i)] = set ? 1.0f : 0.0f;
    total += set ? 1 : 0;
  }
  return x;
}
Exact old_sum(const std::vector<float>& x) {
  double s = 0, c = 0, a = 0;
  for (float f : x) {
    const double v = f, t = s + v;
    c += std::fabs(s) >= std::fabs(v) ? (s - t) + v : (v - t) + s;
    s = t;
    a += std::fabs(v);
  }
  return {s + c, a};
}
std::uint64_t old_hash(const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
"""

MAIN = r"""
volatile double sink;
template <class F> void timed(const char* what, F f) {
  const auto t = std::chrono::steady_clock::now();
  f();
  std::printf("  %-28s %6.2f s\n", what, std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
}
int main(int argc, char**) {
  if (argc > 1) {
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, -1);
  }
  const long long n = 1LL << 28;
  for (int rep = 0; rep < 2; ++rep) {
    timed("allocate and zero 1 GiB", [&] { std::vector<float> z(n); sink = z[n / 2]; });
    {
      std::vector<float> x;
      timed("before: random input", [&] { x = old_random(n, std::mt19937_64(7)); });
      timed("before: compensated sum", [&] { sink = old_sum(x).sum; });
      timed("before: input digest", [&] { sink = static_cast<double>(old_hash(x.data(), 4 * n)); });
    }
    timed("before: integer input", [&] { sink = old_integer(n, std::mt19937_64(7))[n / 2]; });
    {
      std::vector<float> x;
      timed("now: random input", [&] { x = random_values(n, 0.0, 1.0); });
      timed("now: compensated sum", [&] { sink = exact_sum(x).sum; });
      timed("now: input digest", [&] { sink = static_cast<double>(content_hash(x.data(), 4 * n)); });
    }
    timed("now: integer input", [&] { sink = integer_values(n)[n / 2]; });
  }
}
"""


def between(text, start, end):
    return text[text.index(start):text.index(end)]


checks = open(os.path.join(ROOT, "grader/labs/04-reductions/checks.cpp")).read()
kit = open(os.path.join(ROOT, "grader/harness/src/kit.cpp")).read()
now = (between(checks, "/// Elements per chunk of the work", "/// |result - sum| allowed")
       + between(checks, "/// Element i's 64 random bits", "std::string at(long long n, const char* kind) {")
       + between(kit, "std::uint64_t content_hash", "/// Bytes an output holds before the call"))
with tempfile.TemporaryDirectory() as d:
    cpp, exe = os.path.join(d, "bench.cpp"), os.path.join(d, "bench")
    with open(cpp, "w") as f:
        f.write(PRELUDE + now + BEFORE + MAIN)
    subprocess.run(["g++", "-O2", "-std=c++17", "-pthread", "-o", exe, cpp], check=True)
    print("# %d hardware threads" % os.cpu_count())
    for label, args in (("glibc's default: large blocks mapped and unmapped", []),
                        ("freed memory kept in the heap (mallopt, as the lab processes)", ["heap"])):
        print("#", label)
        sys.stdout.flush()
        subprocess.run([exe] + args, check=True)
