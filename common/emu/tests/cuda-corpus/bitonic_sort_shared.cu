// Bitonic sort of segments of 1024 keys, each segment sorted by one block in dynamic shared
// memory (512 threads, each compare-exchange pair handled by the thread of its lower index).
// One template kernel instantiated for int and float keys; the check against std::sort is exact.
// Covers: template kernels, extern __shared__ raw bytes reused as a typed array, many
// __syncthreads rounds, <<<g, b, shared>>>.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK(call)                                                                         \
  do {                                                                                      \
    const cudaError_t err_ = (call);                                                        \
    if (err_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                    \
                   cudaGetErrorString(err_));                                               \
      std::exit(2);                                                                         \
    }                                                                                       \
  } while (0)

constexpr int kSegment = 1024;  // a power of two
constexpr int kThreads = 512;

// Shared memory: kSegment * sizeof(T) bytes.
template <typename T>
__global__ void bitonic_sort_segments(T* data) {
  extern __shared__ __align__(16) unsigned char smem_bytes[];
  T* s = reinterpret_cast<T*>(smem_bytes);
  T* seg = data + static_cast<size_t>(blockIdx.x) * kSegment;
  for (int i = threadIdx.x; i < kSegment; i += blockDim.x) s[i] = seg[i];
  __syncthreads();
  for (int k = 2; k <= kSegment; k *= 2) {
    for (int j = k / 2; j > 0; j /= 2) {
      for (int i = threadIdx.x; i < kSegment; i += blockDim.x) {
        const int partner = i ^ j;
        if (partner > i) {
          const bool ascending = (i & k) == 0;
          const T a = s[i], b = s[partner];
          if ((a > b) == ascending) {
            s[i] = b;
            s[partner] = a;
          }
        }
      }
      __syncthreads();
    }
  }
  for (int i = threadIdx.x; i < kSegment; i += blockDim.x) seg[i] = s[i];
}

template <typename T, typename Gen>
int run(const char* name, int segments, Gen&& make) {
  const size_t n = static_cast<size_t>(segments) * kSegment;
  std::vector<T> h(n), ref, got(n);
  for (T& v : h) v = make();
  ref = h;
  for (int sgm = 0; sgm < segments; ++sgm) std::sort(ref.begin() + sgm * kSegment, ref.begin() + (sgm + 1) * kSegment);
  T* d = nullptr;
  CHECK(cudaMalloc(&d, n * sizeof(T)));
  CHECK(cudaMemcpy(d, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  bitonic_sort_segments<T><<<segments, kThreads, kSegment * sizeof(T)>>>(d);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0.0f;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaMemcpy(got.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  long long wrong = 0;  // keys out of place
  for (size_t i = 0; i < n; ++i) wrong += !(got[i] == ref[i]);
  const bool ok = wrong == 0;
  std::printf("VERSION %s %s %lld\n", name, ok ? "PASS" : "FAIL", wrong);
  std::printf("  time %s %.3f ms\n", name, ms);
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d));
  return ok ? 0 : 1;
}

int main() {
  CHECK(cudaSetDevice(0));
  std::mt19937 gen(4242);
  std::uniform_int_distribution<int> idist(-5000, 5000);  // many equal keys
  std::uniform_real_distribution<float> fdist(-1.0f, 1.0f);
  int failures = 0;
  failures += run<int>("bitonic_int", 48, [&] { return idist(gen); });
  failures += run<float>("bitonic_float", 48, [&] { return fdist(gen); });
  return failures ? 1 : 0;
}
