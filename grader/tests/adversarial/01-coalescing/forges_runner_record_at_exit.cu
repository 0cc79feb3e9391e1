// Forges the runner's record: the lab process sends what the code under test did over a channel
// (--channel FD). At exit, a static object's destructor appends one more event for the measured
// call of the performance check, with the right sums but the evidence of a perfectly coalesced
// kernel; it writes through stderr's FILE with its descriptor swapped for the channel's (fwrite
// and stderr are allowed symbols), in CBOR written by hand. The kernel is the slow thread-per-row
// stub. Three defences stop it, each alone: the source-text rule refuses the FILE's member
// (_fileno); the event's tag is not one of the run's key (record-mac); and a second event for a
// step the kit already sent breaks the kit's order (record).
// defence: source-text,record,record-mac
// The forged event is the emulator's performance check (its evidence, not timings): emulator only.
// expect[emu]: lab fail
// expect[emu]: performance fail
// expect[emu]: correctness fail "a member of the C library's FILE"
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

// glibc passes (argc, argv, envp) to the functions of .init_array.
[[gnu::constructor]] void find_channel(int argc, char** argv, char**) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--channel") g_channel = std::atoi(argv[i + 1]);
}

// The kit's digest of an input (grader/harness/src/kit.cpp, content_hash), read from its source.
std::uint64_t digest(const std::vector<float>& v) {
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  const std::size_t n = v.size() * sizeof(float);
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
    const std::uint8_t m = static_cast<std::uint8_t>(major << 5);
    int bytes = v < 24 ? 0 : v < 0x100 ? 1 : v < 0x10000 ? 2 : v < 0x100000000ull ? 4 : 8;
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
  Cbor& array(std::size_t n) { return head(4, n); }
  Cbor& map(std::size_t n) { return head(5, n); }
  Cbor& null() { return b.push_back(0xf6), *this; }
  Cbor& yes() { return b.push_back(0xf5), *this; }
};

struct Forgery {
  bool armed = false;
  int n = 0;
  std::vector<float> sums;
  std::uint64_t input_hash = 0;

  ~Forgery() {
    if (!armed || g_channel < 0) return;
    const std::size_t bytes = sums.size() * sizeof(float);
    std::vector<std::uint8_t> out(bytes + 64 * sizeof(float), 0xA5);  // the sums, then the untouched guard
    std::memcpy(out.data(), sums.data(), bytes);
    const std::uint64_t matrix = static_cast<std::uint64_t>(n) * n * 4;
    Cbor e;
    e.map(10);
    e.text("type").text("call").text("check").text("performance.coalesced_global_loads").text("seq").u(0);
    e.text("what").text("row_sum(n = " + std::to_string(n) + ", measured)").text("error").null();
    e.text("outputs").array(1).bytes(out);
    e.text("inputs_hash").array(1).u(input_hash);
    e.text("evidence").map(9);
    e.text("available").yes().text("launches").u(1).text("load_sectors").u((matrix + 31) / 32);
    e.text("store_sectors").u(bytes / 32).text("input_bytes_read").array(1).u(matrix);
    e.text("output_bytes_written").array(1).u(bytes).text("output_bytes_changed").array(1).u(bytes);
    e.text("host_writes").array(0).text("host_accesses").array(0);
    e.text("findings").array(0).text("metrics").array(0);
    const std::uint64_t size = e.b.size();
    const int saved = stderr->_fileno;
    stderr->_fileno = g_channel;
    std::fwrite(&size, sizeof size, 1, stderr);
    std::fwrite(e.b.data(), 1, e.b.size(), stderr);
    const std::uint64_t tag = 0x5eed5eed5eed5eedull;  // the kit's tag needs the run's key
    std::fwrite(&tag, sizeof tag, 1, stderr);
    std::fflush(stderr);
    stderr->_fileno = saved;
  }
} g_forgery;

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  gpulab::launch(row_sum_thread_per_row, (n + 255) / 256, 256, 0, m, sums, n);
  // The 32nd call: the performance check's measured one, at the rubric's size (the correctness and
  // sanitizer checks make 31 before it).
  static int calls = 0;
  if (++calls != 32 || n != 512) return;
  gpulab::synchronize();
  std::vector<float> host(static_cast<std::size_t>(n) * n);
  gpulab::copy_to_host(host.data(), m, host.size() * sizeof(float));
  g_forgery.sums.resize(static_cast<std::size_t>(n));
  gpulab::copy_to_host(g_forgery.sums.data(), sums, g_forgery.sums.size() * sizeof(float));
  g_forgery.input_hash = digest(host);
  g_forgery.n = n;
  g_forgery.armed = true;
}
