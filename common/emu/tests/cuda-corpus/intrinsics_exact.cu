// Device intrinsics with exact answers, each checked against a value worked out by hand from
// CUDA's documented definition (the comment beside each): rounding conversions (ties to even,
// saturation, NaN), 24-bit and high-half multiplies, byte permutes, funnel shifts, sums of
// absolute differences, byte dot products, bit casts of doubles, correctly rounded arithmetic and
// norms; scoped and xor atomics; the classic atomicAdd for doubles built on atomicCAS and
// __double_as_longlong. One thread computes the table; the atomics run over a whole grid.
// Covers: __float2int_{rn,rz,ru,rd}, __float2uint_rn, __double2int_rn, __int2float_rn, __mul24,
// __umul24, __mulhi, __umul64hi, __byte_perm, __funnelshift_{l,r,lc,rc}, __sad, __usad, __dp4a,
// __double_as_longlong, __longlong_as_double, __fsqrt_rn, __fdiv_rn, norm3df, rnorm3df, rhypotf,
// atomicXor, atomicAdd_block, atomicAdd_system, atomicMax_block, atomicCAS (on unsigned long long),
// __threadfence_system, __nanosleep.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
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

constexpr int kValues = 40;

__global__ void integer_and_conversion_table(long long* out, float nan) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  int k = 0;
  out[k++] = __float2int_rn(2.5f);         // 2: ties to even
  out[k++] = __float2int_rn(3.5f);         // 4
  out[k++] = __float2int_rn(-2.5f);        // -2
  out[k++] = __float2int_rz(-2.7f);        // -2
  out[k++] = __float2int_ru(2.1f);         // 3
  out[k++] = __float2int_rd(-0.5f);        // -1
  out[k++] = __float2int_rn(1e10f);        // 2147483647: saturates
  out[k++] = __float2int_rn(-1e10f);       // -2147483648
  out[k++] = __float2int_rn(nan);          // 0
  out[k++] = __float2uint_rn(-3.0f);       // 0: saturates at zero
  out[k++] = __double2int_rn(-7.5);        // -8: ties to even
  out[k++] = static_cast<long long>(__int2float_rn(16777217));  // 16777216: nearest float, ties to even
  out[k++] = __mul24(0x00FFFFFF, 2);       // -2: 0xFFFFFF is -1 in 24 bits
  out[k++] = __umul24(0x01000003u, 5u);    // 15: the top byte is dropped
  out[k++] = __mulhi(0x40000000, 8);       // 2: high half of 2^33
  out[k++] = static_cast<long long>(__umul64hi(0x8000000000000000ull, 6ull));  // 3
  out[k++] = __byte_perm(0x33221100u, 0x77665544u, 0x5140u);  // 0x55114400
  out[k++] = __funnelshift_l(0x80000001u, 0x1u, 4u);   // 0x18: high word of 0x0000000180000001 << 4
  out[k++] = __funnelshift_r(0x80000001u, 0x1u, 4u);   // 0x18000000: low word of it >> 4
  out[k++] = __funnelshift_l(0x80000001u, 0x1u, 36u);  // 0x18: the shift is taken mod 32
  out[k++] = __funnelshift_lc(0x80000001u, 0x1u, 40u); // 0x80000001: clamped to 32, the low word
  out[k++] = __funnelshift_rc(0x80000001u, 0x1u, 40u); // 0x1: clamped to 32, the high word
  out[k++] = __sad(3, 10, 5u);             // 12
  out[k++] = __usad(10u, 3u, 1u);          // 8
  out[k++] = __dp4a(0x01FF0203, 0x02020202, 10);  // 20: bytes 3, 2, -1, 1 times 2 each, plus 10
  out[k++] = __double_as_longlong(1.0);    // 0x3FF0000000000000
  out[k++] = static_cast<long long>(__longlong_as_double(0x4000000000000000ll));  // 2
  out[k++] = static_cast<long long>(__fsqrt_rn(2.0f) == sqrtf(2.0f));  // 1
  out[k++] = static_cast<long long>(__fdiv_rn(1.0f, 3.0f) == 1.0f / 3.0f);  // 1
  out[k++] = static_cast<long long>(norm3df(3.0f, 4.0f, 12.0f) + 0.5f);  // 13
  out[k++] = static_cast<long long>(1e6f * rnorm3df(3.0f, 4.0f, 12.0f) + 0.5f);  // 76923 (1e6 / 13)
  out[k++] = static_cast<long long>(rhypotf(3.0f, 4.0f) * 1000.0f + 0.5f);  // 200
  out[k++] = static_cast<long long>(norm3df(3e30f, 4e30f, 0.0f) / 1e30f + 0.5f);  // 5: no overflow
  __threadfence_system();
  __nanosleep(100);
  const int entries = k;
  out[k] = entries + 1;                    // 34: the number of entries above plus one
}

// The classic double atomicAdd for GPUs without one: a compare-and-swap loop on the bits.
__device__ double add_double_cas(double* address, double v) {
  unsigned long long* word = reinterpret_cast<unsigned long long*>(address);
  unsigned long long old = *word, seen;
  do {
    seen = old;
    old = atomicCAS(word, seen, static_cast<unsigned long long>(__double_as_longlong(__longlong_as_double(static_cast<long long>(seen)) + v)));
  } while (seen != old);
  return __longlong_as_double(static_cast<long long>(old));
}

__global__ void scoped_atomics(int* sum_block, unsigned* xor_all, int* max_block, unsigned long long* sum_system,
                               double* sum_double) {
  __shared__ int block_sum, block_max;
  if (threadIdx.x == 0) block_sum = 0, block_max = 0;
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd_block(&block_sum, 1);
  atomicMax_block(&block_max, i);
  atomicXor(xor_all, static_cast<unsigned>(i) * 2654435761u);
  atomicAdd_system(sum_system, static_cast<unsigned long long>(i));
  add_double_cas(sum_double, 0.5 * i);
  __syncthreads();
  if (threadIdx.x == 0) {
    sum_block[blockIdx.x] = block_sum;
    max_block[blockIdx.x] = block_max;
  }
}

int main() {
  CHECK(cudaSetDevice(0));
  const long long want[] = {2, 4, -2, -2, 3, -1, 2147483647LL, -2147483648LL, 0, 0, -8, 16777216, -2, 15, 2, 3,
                            0x55114400, 0x18, 0x18000000, 0x18, 0x80000001LL, 0x1, 12, 8, 20,
                            0x3FF0000000000000LL, 2, 1, 1, 13, 76923, 200, 5, 34};
  const int count = static_cast<int>(sizeof(want) / sizeof(want[0]));
  long long* d_out;
  CHECK(cudaMalloc(&d_out, kValues * sizeof(long long)));
  integer_and_conversion_table<<<1, 32>>>(d_out, std::nanf(""));
  CHECK(cudaGetLastError());
  std::vector<long long> got(kValues);
  CHECK(cudaMemcpy(got.data(), d_out, kValues * sizeof(long long), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int k = 0; k < count; ++k)
    if (got[k] != want[k]) {
      ++bad;
      std::printf("  entry %d: got %lld (0x%llx), expected %lld (0x%llx)\n", k, got[k],
                  static_cast<unsigned long long>(got[k]), want[k], static_cast<unsigned long long>(want[k]));
    }
  std::printf("VERSION integer_and_conversion_table %s %d wrong entries\n", bad ? "FAIL" : "PASS", bad);

  const int blocks = 7, threads = 128, n = blocks * threads;
  int *d_sum_block, *d_max_block;
  unsigned* d_xor;
  unsigned long long* d_sum_system;
  double* d_sum_double;
  CHECK(cudaMalloc(&d_sum_block, blocks * sizeof(int)));
  CHECK(cudaMalloc(&d_max_block, blocks * sizeof(int)));
  CHECK(cudaMalloc(&d_xor, sizeof(unsigned)));
  CHECK(cudaMalloc(&d_sum_system, sizeof(unsigned long long)));
  CHECK(cudaMalloc(&d_sum_double, sizeof(double)));
  CHECK(cudaMemset(d_xor, 0, sizeof(unsigned)));
  CHECK(cudaMemset(d_sum_system, 0, sizeof(unsigned long long)));
  CHECK(cudaMemset(d_sum_double, 0, sizeof(double)));
  scoped_atomics<<<blocks, threads>>>(d_sum_block, d_xor, d_max_block, d_sum_system, d_sum_double);
  CHECK(cudaGetLastError());
  std::vector<int> sums(blocks), maxima(blocks);
  unsigned x = 0;
  unsigned long long total = 0;
  double total_double = 0;
  CHECK(cudaMemcpy(sums.data(), d_sum_block, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(maxima.data(), d_max_block, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&x, d_xor, sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&total, d_sum_system, sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&total_double, d_sum_double, sizeof(double), cudaMemcpyDeviceToHost));
  unsigned want_x = 0;
  for (int i = 0; i < n; ++i) want_x ^= static_cast<unsigned>(i) * 2654435761u;
  int bad_atomics = 0;
  for (int b = 0; b < blocks; ++b) bad_atomics += sums[b] != threads || maxima[b] != (b + 1) * threads - 1;
  bad_atomics += x != want_x;
  bad_atomics += total != static_cast<unsigned long long>(n) * (n - 1) / 2;
  bad_atomics += total_double != 0.5 * (static_cast<double>(n) * (n - 1) / 2);  // halves of integers: exact
  std::printf("VERSION scoped_xor_and_cas_atomics %s %d wrong results\n", bad_atomics ? "FAIL" : "PASS", bad_atomics);
  CHECK(cudaFree(d_out));
  CHECK(cudaFree(d_sum_block));
  CHECK(cudaFree(d_max_block));
  CHECK(cudaFree(d_xor));
  CHECK(cudaFree(d_sum_system));
  CHECK(cudaFree(d_sum_double));
  return bad || bad_atomics ? 1 : 0;
}
