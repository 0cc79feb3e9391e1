// Strided stores on one GPU: kernels that write 1 GiB as records of S bytes, one record per
// thread, each record written as S/W stores of W bytes (W = 4, 8, 16: float, float2, float4; S =
// W: a dense, coalesced write, up to 256). A warp's store then touches 32 lanes x W bytes spread
// over 32 x S bytes: with S >= 32, 32 sectors of which each lane's store fills W bytes, and the
// record's other stores fill the rest soon after. Mode "all" writes every byte; mode "first"
// writes only the first W bytes of each record (the rest of each sector is never written). Times
// each against a float4 copy kernel of the same run, and prints the store sectors per request the
// emulator counts (l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum per request), so that a
// sector's cost can be read off: lab 02's thread-per-particle conversion to AoS writes 16-byte
// fields 64 bytes apart and runs at 0.71 of copy on an H200 where the strided loads of the same
// pattern run at copy speed (docs/results/perfmodel.md, "Strided stores").
//   nvcc -O3 -std=c++17 -arch=sm_90 docs/results/perfmodel/probes/stores.cu -o stores && ./stores
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../../probes/cuda_check.hpp"
#include "../../probes/event_timer.hpp"

template <class V>
__device__ V value_of(long long i) {
  const float f = static_cast<float>(i & 1023);
  if constexpr (sizeof(V) == 16) return V{f, f, f, f};
  else if constexpr (sizeof(V) == 8) return V{f, f};
  else return f;
}

/// Thread i writes `pieces` consecutive V of record i; records are `stride` V apart.
template <class V>
__global__ void write_records(V* out, long long records, int stride, int pieces) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= records) return;
  const V v = value_of<V>(i);
  V* r = out + i * stride;
#pragma unroll 1
  for (int k = 0; k < pieces; ++k) r[k] = v;
}

__global__ void copy4(const float4* in, float4* out, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

/// Median of 7 timed launches after a warm-up; one launch under PROBE_ONCE=1 (for Nsight Compute).
template <class F>
float median_ms(F launch) {
  static const bool once = std::getenv("PROBE_ONCE") != nullptr;
  return static_cast<float>(median_event_ms(launch, once ? 1 : 7, !once, [] {}));
}

template <class V>
void run(void* buf, std::size_t bytes, double copy_bytes_per_s) {
  const int w = sizeof(V);
  for (int s : {4, 8, 16, 32, 64, 128, 256}) {
    if (s < w) continue;
    for (int all = 1; all >= 0; --all) {
      if (!all && s == w) continue;
      const long long records = static_cast<long long>(bytes / s);
      const int pieces = all ? s / w : 1;
      const unsigned blocks = static_cast<unsigned>((records + 255) / 256);
      const float ms = median_ms([&] { write_records<V><<<blocks, 256>>>(static_cast<V*>(buf), records, s / w, pieces); });
      const double written = static_cast<double>(records) * pieces * w;
      const double requests = static_cast<double>(records) * pieces / 32;
      // Sectors per request: 32 lanes' W bytes at S bytes apart, aligned.
      const double span = 32.0 * s, per_request = s >= 32 ? 32.0 : span / 32;
      const double sector_ops = requests * per_request;
      const double bps = written / (ms * 1e-3);
      std::printf("%d\t%d\t%s\t%.4f\t%.0f\t%.0f\t%.3e\t%.3f\t%.3e\n", w, s, all ? "all" : "first", ms, written,
                  per_request, bps, bps / copy_bytes_per_s, sector_ops / (ms * 1e-3));
    }
  }
}

int main() {
  const std::size_t bytes = std::size_t{1} << 30;
  void* buf;
  float4* src;
  CHECK(cudaMalloc(&buf, bytes));
  CHECK(cudaMalloc(&src, bytes / 2));
  CHECK(cudaMemset(buf, 0, bytes));
  CHECK(cudaMemset(src, 0, bytes / 2));
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  const long long n4 = static_cast<long long>(bytes / 2 / 16);
  const float copy_ms = median_ms([&] {
    copy4<<<static_cast<unsigned>((n4 + 255) / 256), 256>>>(src, static_cast<float4*>(buf), n4);
  });
  const double copy_bytes_per_s = 2.0 * (bytes / 2) / (copy_ms * 1e-3);  // read + written
  std::printf("# %s; float4 copy of 512 MiB: %.4f ms, %.3e bytes/s (read + written)\n", p.name, copy_ms,
              copy_bytes_per_s);
  std::printf("width\tstride\tmode\tms\tbytes_written\tsectors_per_request\tbytes_per_s\tof_copy\tsector_ops_per_s\n");
  run<float>(buf, bytes, copy_bytes_per_s);
  run<float2>(buf, bytes, copy_bytes_per_s);
  run<float4>(buf, bytes, copy_bytes_per_s);
  CHECK(cudaFree(buf));
  CHECK(cudaFree(src));
  return 0;
}
