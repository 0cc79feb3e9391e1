// Writes the record's event for the measured call of the performance check itself, then aborts,
// so that the kit never writes its own: the record ends with a complete, well-ordered forgery
// (right sums, the inputs' digest as the kit computes it, the evidence of a perfectly coalesced
// kernel), and a record cut short by a crash is not suspicious in itself. The event goes through
// stderr's FILE with its descriptor swapped for the channel's, the descriptor found without naming
// the FILE's members (the int that is 2 in stderr's FILE and 1 in stdout's); the channel's number
// comes from argv ([[gnu::constructor]] functions get it). The kernel is the thread-per-row stub.
// What stops it: every event the kit sends carries a tag under a key only the kit and the judge
// hold; this one's tag is made up, and the judge rejects the whole record.
// defence: record-mac
// The forged event is the emulator's performance check (its evidence, not timings): emulator only.
// expect[emu]: lab fail
// expect[emu]: performance.coalesced_global_loads fail "the record was tampered with"
// expect[emu]: correctness fail "the record was tampered with"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"
#include "row_sum.hpp"

namespace {

__global__ void row_sum_thread_per_row(const float* m, float* sums, int n) {
  const int row = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (row >= n) return;
  float s = 0.0f;
  for (int col = 0; col < n; ++col) s += m[static_cast<long long>(row) * n + col];
  sums[row] = s;
}

int g_channel = -1;
int g_calls = 0;

[[gnu::constructor]] void find_channel(int argc, char** argv, char**) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--channel") g_channel = std::atoi(argv[i + 1]);
}

// The kit's digest of an input (grader/harness/src/kit.cpp, content_hash), read from its source.
std::uint64_t digest(const void* data, std::size_t n) {
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t h[4] = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull, 0xA4093822299F31D0ull, 0x082EFA98EC4E6C89ull};
  auto mix = [](std::uint64_t x, std::uint64_t w) {
    x = (x ^ w) * kMul;
    return (x << 29) | (x >> 35);
  };
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; ++k) {
      std::uint64_t w;
      std::memcpy(&w, p + i + 8 * k, 8);
      h[k] = mix(h[k], w);
    }
  for (int k = 0; i + 8 <= n; i += 8, ++k) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    h[k] = mix(h[k], w);
  }
  std::uint64_t tail = 0;
  for (; i < n; ++i) tail = (tail << 8) | p[i];
  std::uint64_t out = mix(mix(mix(mix(h[0], h[1]), h[2]), h[3]), tail) ^ n;
  out ^= out >> 31;
  return out * kMul;
}

// Just enough CBOR (RFC 8949) for one event.
struct Cbor {
  std::vector<std::uint8_t> b;
  Cbor& head(int major, std::uint64_t v) {
    const auto m = static_cast<std::uint8_t>(major << 5);
    const int bytes = v < 24 ? 0 : v < 0x100 ? 1 : v < 0x10000 ? 2 : v < 0x100000000ull ? 4 : 8;
    b.push_back(static_cast<std::uint8_t>(m | (bytes == 0 ? v : bytes == 1 ? 24 : bytes == 2 ? 25 : bytes == 4 ? 26 : 27)));
    for (int i = bytes - 1; i >= 0; --i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    return *this;
  }
  Cbor& u(std::uint64_t v) { return head(0, v); }
  Cbor& text(const std::string& s) {
    head(3, s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Cbor& bytes(const std::vector<std::uint8_t>& v) {
    head(2, v.size());
    b.insert(b.end(), v.begin(), v.end());
    return *this;
  }
};

// The event the kit would send for a perfectly coalesced kernel with these sums.
std::vector<std::uint8_t> forged_call(int n, const std::vector<float>& sums, std::uint64_t input_digest) {
  const std::size_t bytes = sums.size() * sizeof(float);
  std::vector<std::uint8_t> out(bytes + 64 * sizeof(float), 0xA5);  // the sums, then the untouched guard
  std::memcpy(out.data(), sums.data(), bytes);
  const std::uint64_t matrix = static_cast<std::uint64_t>(n) * n * 4;
  Cbor e;
  e.head(5, 10);
  e.text("type").text("call").text("check").text("performance.coalesced_global_loads").text("seq").u(0);
  e.text("what").text("row_sum(n = " + std::to_string(n) + ", measured)").text("error").head(7, 22);
  e.text("outputs").head(4, 1).bytes(out);
  e.text("inputs_hash").head(4, 1).u(input_digest);
  e.text("evidence").head(5, 9);
  e.text("available").head(7, 21).text("launches").u(1).text("load_sectors").u((matrix + 31) / 32);
  e.text("store_sectors").u(bytes / 32).text("input_bytes_read").head(4, 1).u(matrix);
  e.text("output_bytes_written").head(4, 1).u(bytes).text("output_bytes_changed").head(4, 1).u(bytes);
  e.text("host_writes").head(4, 0).text("host_accesses").head(4, 0);
  e.text("findings").head(4, 0).text("metrics").head(4, 0);
  return e.b;
}

// Writes one frame (size, bytes, an 8-byte tag it cannot compute) through stderr's FILE.
void write_to_channel(const std::vector<std::uint8_t>& event) {
  int* descriptor = nullptr;
  for (int i = 0; i < 64 && !descriptor; ++i)
    if (reinterpret_cast<int*>(stderr)[i] == 2 && reinterpret_cast<int*>(stdout)[i] == 1)
      descriptor = reinterpret_cast<int*>(stderr) + i;
  if (!descriptor || g_channel < 0) return;
  const std::uint64_t size = event.size(), tag = 0x5eed5eed5eed5eedull;
  std::fflush(stderr);
  *descriptor = g_channel;
  std::fwrite(&size, sizeof size, 1, stderr);
  std::fwrite(event.data(), 1, event.size(), stderr);
  std::fwrite(&tag, sizeof tag, 1, stderr);
  std::fflush(stderr);
  *descriptor = 2;
}

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  gpulab::launch(row_sum_thread_per_row, (n + 255) / 256, 256, 0, m, sums, n);
  // The 35th call: the performance check's measured one (the correctness checks, the interleaved
  // calls and the sanitizer check make 34 before it).
  if (++g_calls != 35 || n != 512) return;
  gpulab::synchronize();
  std::vector<float> host(static_cast<std::size_t>(n) * n), result(static_cast<std::size_t>(n));
  gpulab::copy_to_host(host.data(), m, host.size() * sizeof(float));
  gpulab::copy_to_host(result.data(), sums, result.size() * sizeof(float));
  write_to_channel(forged_call(n, result, digest(host.data(), host.size() * sizeof(float))));
  std::abort();
}
