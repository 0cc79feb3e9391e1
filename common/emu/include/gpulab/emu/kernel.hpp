// gpulab/emu/kernel.hpp - the CUDA vocabulary for kernels compiled as plain C++ and run by the
// gpulab CPU emulator. Included through gpulab/gpu.hpp; never include it directly.
//
// Model: every GPU thread is a fiber; a block's fibers run on one worker OS thread, so
// `__shared__` variables (static thread_local) are shared by exactly the threads of one block.
// Barriers and warp collectives are rendezvous between fibers, checked for divergence.
#pragma once

#include <math.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>  // before __noinline__ is defined: libstdc++'s shared_ptr spells __attribute__((__noinline__))
#include <type_traits>

#include "gpulab/emu/runtime.hpp"

// ---- qualifiers --------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __restrict__ __restrict
// As CUDA's own headers define it for GCC and clang: a GNU attribute, which may stand among the
// declaration's specifiers (`__shared__ __align__(16) float t[...]`), where `alignas` may not.
#define __align__(n) __attribute__((aligned(n)))
#define __constant__
/// One instance per running block: each block runs on one worker thread at a time.
/// `used` makes the storage opaque to the optimiser: a `__shared__` array that is read but never
/// written is not folded to its zero initialiser (the emulator poisons it and reports the read, as
/// a GPU would return garbage). Each variable comes after a red zone of its own (a variable the
/// emulator knows by its name, gpulab_shared_redzone_*), so that an access just past one
/// `__shared__` array lands in a red zone, not in the next array, and is stopped and reported.
/// Every `__shared__` variable is 16-byte aligned (float4 accesses), also when written
/// `__align__(16) __shared__ T x[n]` (the alignment then applies to the red zone).
#define GPULAB_EMU_CAT2(a, b) a##b
#define GPULAB_EMU_CAT(a, b) GPULAB_EMU_CAT2(a, b)
#define __shared__                                                                              \
  __attribute__((used, unused)) static thread_local char GPULAB_EMU_CAT(gpulab_shared_redzone_, \
                                                                        __COUNTER__)[128];      \
  __attribute__((used, aligned(16))) static thread_local

/// Marks a file compiled with the emulator's access tracing (its name: pass_abi.hpp), for the twin pass
/// (common/emu/passes/twin_pass.cpp): untraced twins of its functions, and block loops that run
/// only in blocks nobody checks.
#if defined(__clang__) && defined(__has_feature)
#if __has_feature(coverage_sanitizer)
extern "C" {
__attribute__((used)) static const char gpulab_emu_traced_file = 1;
}
#endif
#endif

// ---- built-in index variables ------------------------------------------------------------
struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

/// What threadIdx & co. read: variables of the emulator (thread-local to each worker OS thread),
/// which the scheduler rewrites before resuming each fiber. Variables, not macros, so that host
/// code may have variables of the same names (`dim3 blockDim(16, 16);` in main, as CUDA programs
/// often do): a local declaration simply hides the built-in, as in CUDA.
extern __thread uint3 threadIdx __attribute__((tls_model("initial-exec")));
extern __thread uint3 blockIdx __attribute__((tls_model("initial-exec")));
extern __thread dim3 blockDim __attribute__((tls_model("initial-exec")));
extern __thread dim3 gridDim __attribute__((tls_model("initial-exec")));

/// Lanes per warp for this run (32 by default; GPULAB_WARP_SIZE=64 emulates AMD wavefronts).
/// A run-time value, exactly as on CUDA and ROCm 7: never a compile-time constant.
extern int warpSize;

// ---- barriers and warp collectives -------------------------------------------------------
// The trailing file/line parameters default to the caller's location, so every diagnostic
// names the line of the student's code.
inline void __syncthreads(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  gpulab::emu::sync_block(gpulab::emu::BarrierOp::sync, 0, file, line);
}
inline int __syncthreads_count(int pred, const char* file = __builtin_FILE(),
                               int line = __builtin_LINE()) {
  return gpulab::emu::sync_block(gpulab::emu::BarrierOp::count, pred != 0, file, line);
}
inline int __syncthreads_and(int pred, const char* file = __builtin_FILE(),
                             int line = __builtin_LINE()) {
  return gpulab::emu::sync_block(gpulab::emu::BarrierOp::all, pred != 0, file, line);
}
inline int __syncthreads_or(int pred, const char* file = __builtin_FILE(),
                            int line = __builtin_LINE()) {
  return gpulab::emu::sync_block(gpulab::emu::BarrierOp::any, pred != 0, file, line);
}
inline void __syncwarp(unsigned long long mask = ~0ull, const char* file = __builtin_FILE(),
                       int line = __builtin_LINE()) {
  gpulab::emu::warp_collective(gpulab::emu::WarpOp::sync, mask, 0, -1, file, line);
}
inline unsigned long long __activemask(const char* file = __builtin_FILE(),
                                       int line = __builtin_LINE()) {
  return gpulab::emu::active_mask(file, line);
}

namespace gpulab::emu {
template <class T>
inline std::uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>,
                "warp shuffles move values of at most 8 bytes; shuffle wider types field by field");
  std::uint64_t u = 0;
  std::memcpy(&u, &v, sizeof v);
  return u;
}
template <class T>
inline T from_bits(std::uint64_t u) {
  T v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}
/// Source lane of a shuffle inside its `width`-lane segment; -1 = keep the caller's own value.
int shuffle_source(WarpOp op, int arg, int width, const char* file, int line);
}  // namespace gpulab::emu

template <class T>
T __shfl_sync(unsigned long long mask, T v, int src, int width = warpSize,
              const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  using namespace gpulab::emu;
  const int s = shuffle_source(WarpOp::shfl, src, width, file, line);
  return from_bits<T>(warp_collective(WarpOp::shfl, mask, to_bits(v), s, file, line));
}
template <class T>
T __shfl_up_sync(unsigned long long mask, T v, unsigned delta, int width = warpSize,
                 const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  using namespace gpulab::emu;
  const int s = shuffle_source(WarpOp::shfl_up, static_cast<int>(delta), width, file, line);
  return from_bits<T>(warp_collective(WarpOp::shfl, mask, to_bits(v), s, file, line));
}
template <class T>
T __shfl_down_sync(unsigned long long mask, T v, unsigned delta, int width = warpSize,
                   const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  using namespace gpulab::emu;
  const int s = shuffle_source(WarpOp::shfl_down, static_cast<int>(delta), width, file, line);
  return from_bits<T>(warp_collective(WarpOp::shfl, mask, to_bits(v), s, file, line));
}
template <class T>
T __shfl_xor_sync(unsigned long long mask, T v, int lane_mask, int width = warpSize,
                  const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  using namespace gpulab::emu;
  const int s = shuffle_source(WarpOp::shfl_xor, lane_mask, width, file, line);
  return from_bits<T>(warp_collective(WarpOp::shfl, mask, to_bits(v), s, file, line));
}
inline unsigned long long __ballot_sync(unsigned long long mask, int pred,
                                        const char* file = __builtin_FILE(),
                                        int line = __builtin_LINE()) {
  return gpulab::emu::warp_collective(gpulab::emu::WarpOp::ballot, mask, pred != 0, -1, file,
                                      line);
}
inline int __any_sync(unsigned long long mask, int pred, const char* file = __builtin_FILE(),
                      int line = __builtin_LINE()) {
  return static_cast<int>(
      gpulab::emu::warp_collective(gpulab::emu::WarpOp::any, mask, pred != 0, -1, file, line));
}
inline int __all_sync(unsigned long long mask, int pred, const char* file = __builtin_FILE(),
                      int line = __builtin_LINE()) {
  return static_cast<int>(
      gpulab::emu::warp_collective(gpulab::emu::WarpOp::all, mask, pred != 0, -1, file, line));
}

// ---- match and reduce (sm_70 / sm_80 warp functions), built on the collectives above --------
// Every lane of `mask` must call them, as on the GPU (the shuffles and ballots they are made of
// check it). Values compare bit for bit, as the hardware's match does.
template <class T>
unsigned long long __match_any_sync(unsigned long long mask, T value, const char* file = __builtin_FILE(),
                                    int line = __builtin_LINE()) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "__match_any_sync compares 4- or 8-byte values");
  const std::uint64_t mine = gpulab::emu::to_bits(value);
  // One group per distinct value: its lowest lane not yet grouped shows its value to the others;
  // `left` is the same on every lane (ballots), so every lane makes the same trips.
  unsigned long long left = mask, group = 0;
  while (left != 0) {
    const int leader = __builtin_ctzll(left);
    const std::uint64_t v = __shfl_sync(mask, mine, leader, warpSize, file, line);
    const unsigned long long same = __ballot_sync(mask, mine == v, file, line);
    if (mine == v) group = same;
    left &= ~same;
    if ((same >> leader & 1ull) == 0) break;  // the leader did not take part: the ballot faulted
  }
  return group;
}
template <class T>
unsigned long long __match_all_sync(unsigned long long mask, T value, int* pred, const char* file = __builtin_FILE(),
                                    int line = __builtin_LINE()) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "__match_all_sync compares 4- or 8-byte values");
  const std::uint64_t mine = gpulab::emu::to_bits(value);
  const int first = mask != 0 ? __builtin_ctzll(mask) : 0;
  const std::uint64_t v = __shfl_sync(mask, mine, first, warpSize, file, line);
  const int all = __all_sync(mask, mine == v, file, line);
  *pred = all;
  return all ? mask : 0ull;
}
namespace gpulab::emu {
/// __reduce_*_sync: the lanes of `mask` combined by `op`; a butterfly of shuffles when `mask` is
/// the whole warp, else one shuffle per lane of `mask`.
template <class T, class Op>
T warp_reduce(unsigned long long mask, T value, Op op, const char* file, int line) {
  const unsigned long long whole = warpSize >= 64 ? ~0ull : (1ull << warpSize) - 1ull;
  if (mask == whole) {
    for (int d = warpSize / 2; d > 0; d /= 2) value = op(value, __shfl_xor_sync(mask, value, d, warpSize, file, line));
    return value;
  }
  T out{};
  bool first = true;
  for (unsigned long long left = mask; left != 0; left &= left - 1) {
    const T v = __shfl_sync(mask, value, __builtin_ctzll(left), warpSize, file, line);
    out = first ? v : op(out, v);
    first = false;
  }
  return out;
}
}  // namespace gpulab::emu
// As CUDA's overloads: int and unsigned for add, min and max (the sum wraps, as the hardware's).
#define GPULAB_EMU_WARP_REDUCE(name, T, expr)                                                             \
  inline T name(unsigned long long mask, T value, const char* file = __builtin_FILE(),                    \
                int line = __builtin_LINE()) {                                                            \
    return gpulab::emu::warp_reduce(mask, value, [](T a, T b) { return expr; }, file, line);               \
  }
GPULAB_EMU_WARP_REDUCE(__reduce_add_sync, unsigned, a + b)
GPULAB_EMU_WARP_REDUCE(__reduce_add_sync, int, static_cast<int>(static_cast<unsigned>(a) + static_cast<unsigned>(b)))
GPULAB_EMU_WARP_REDUCE(__reduce_min_sync, unsigned, a < b ? a : b)
GPULAB_EMU_WARP_REDUCE(__reduce_min_sync, int, a < b ? a : b)
GPULAB_EMU_WARP_REDUCE(__reduce_max_sync, unsigned, a > b ? a : b)
GPULAB_EMU_WARP_REDUCE(__reduce_max_sync, int, a > b ? a : b)
#undef GPULAB_EMU_WARP_REDUCE
inline unsigned __reduce_and_sync(unsigned long long mask, unsigned value, const char* file = __builtin_FILE(),
                                  int line = __builtin_LINE()) {
  return gpulab::emu::warp_reduce(mask, value, [](unsigned a, unsigned b) { return a & b; }, file, line);
}
inline unsigned __reduce_or_sync(unsigned long long mask, unsigned value, const char* file = __builtin_FILE(),
                                 int line = __builtin_LINE()) {
  return gpulab::emu::warp_reduce(mask, value, [](unsigned a, unsigned b) { return a | b; }, file, line);
}
inline unsigned __reduce_xor_sync(unsigned long long mask, unsigned value, const char* file = __builtin_FILE(),
                                  int line = __builtin_LINE()) {
  return gpulab::emu::warp_reduce(mask, value, [](unsigned a, unsigned b) { return a ^ b; }, file, line);
}

// ---- atomics (device-wide, relaxed, like CUDA's) -----------------------------------------
// Each is reported to the emulator so the memory metrics can count atomics.
namespace gpulab::emu {
template <class T, class F>
T atomic_update(T* p, F f, const char* file, int line) {
  static_assert(sizeof(T) <= 8, "the emulator's atomics update at most 8 bytes");
  // The read-modify-write itself is the emulator's (atomic_apply): no plain load of *p for the
  // tracing to count, and no atomic instruction in the kernel file but the kernel's own.
  T old;
  atomic_apply(
      p, sizeof(T),
      [](const void* current, void* next, const void* context) {
        T c;
        std::memcpy(static_cast<void*>(&c), current, sizeof c);
        const T n = (*static_cast<const F*>(context))(c);
        std::memcpy(next, static_cast<const void*>(&n), sizeof n);
      },
      &f, &old, file, line);
  return old;
}
}  // namespace gpulab::emu

template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
T atomicAdd(T* p, T v, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [v](T c) { return static_cast<T>(c + v); }, file, line);
}
template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
T atomicSub(T* p, T v, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [v](T c) { return static_cast<T>(c - v); }, file, line);
}
template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
T atomicMax(T* p, T v, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [v](T c) { return c < v ? v : c; }, file, line);
}
template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
T atomicMin(T* p, T v, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [v](T c) { return v < c ? v : c; }, file, line);
}
template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
T atomicExch(T* p, T v, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [v](T) { return v; }, file, line);
}
template <class T, class = std::enable_if_t<std::is_integral_v<T>>>
T atomicCAS(T* p, T expected, T desired, const char* file = __builtin_FILE(),
            int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(
      p, [expected, desired](T c) { return c == expected ? desired : c; }, file, line);
}
template <class T, class = std::enable_if_t<std::is_integral_v<T>>>
T atomicAnd(T* p, T v, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [v](T c) { return static_cast<T>(c & v); }, file, line);
}
template <class T, class = std::enable_if_t<std::is_integral_v<T>>>
T atomicOr(T* p, T v, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [v](T c) { return static_cast<T>(c | v); }, file, line);
}
/// CUDA's wrapping counters: atomicInc stores (old >= limit) ? 0 : old + 1, atomicDec stores
/// (old == 0 || old > limit) ? limit : old - 1; both return old.
inline unsigned atomicInc(unsigned* p, unsigned limit, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [limit](unsigned c) { return c >= limit ? 0u : c + 1u; }, file, line);
}
inline unsigned atomicDec(unsigned* p, unsigned limit, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return gpulab::emu::atomic_update(p, [limit](unsigned c) { return c == 0u || c > limit ? limit : c - 1u; }, file,
                                    line);
}
inline void __threadfence() { gpulab::emu::thread_fence(); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// ---- vector types ------------------------------------------------------------------------
// Under clang the 2- and 4-wide types are vector types, so that a float4 load is one 16-byte
// access (as on a GPU) and the memory metrics count it as such; members are .x .y .z .w.
// Do not rely on vector arithmetic (a + b on float4): CUDA does not define it.
#if defined(__clang__)
#define GPULAB_EMU_VEC(T, N, W) typedef T N##W __attribute__((ext_vector_type(W)));
#else
#define GPULAB_EMU_VEC(T, N, W) \
  struct alignas(sizeof(T) * W) N##W { T x, y GPULAB_EMU_VEC_ZW##W; };
#define GPULAB_EMU_VEC_ZW2
#define GPULAB_EMU_VEC_ZW4 , z, w
#endif
GPULAB_EMU_VEC(float, float, 2)
GPULAB_EMU_VEC(float, float, 4)
GPULAB_EMU_VEC(int, int, 2)
GPULAB_EMU_VEC(int, int, 4)
GPULAB_EMU_VEC(unsigned, uint, 2)
GPULAB_EMU_VEC(unsigned, uint, 4)
GPULAB_EMU_VEC(double, double, 2)
#undef GPULAB_EMU_VEC
struct float3 { float x, y, z; };
struct int3 { int x, y, z; };
struct alignas(32) double4 { double x, y, z, w; };
inline float2 make_float2(float x, float y) { float2 v; v.x = x; v.y = y; return v; }
inline float3 make_float3(float x, float y, float z) { return {x, y, z}; }
inline float4 make_float4(float x, float y, float z, float w) { float4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
inline int2 make_int2(int x, int y) { int2 v; v.x = x; v.y = y; return v; }
inline int3 make_int3(int x, int y, int z) { return {x, y, z}; }
inline int4 make_int4(int x, int y, int z, int w) { int4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
inline uint2 make_uint2(unsigned x, unsigned y) { uint2 v; v.x = x; v.y = y; return v; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { uint4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
inline double2 make_double2(double x, double y) { double2 v; v.x = x; v.y = y; return v; }
inline double4 make_double4(double x, double y, double z, double w) { return {x, y, z, w}; }
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return {x, y, z}; }

// ---- math and bit functions students reach for -------------------------------------------
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __powf(float a, float b) { return std::pow(a, b); }
inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
// min/max with CUDA's overload set: the mixed signed/unsigned forms return the unsigned type
// (as CUDA's math_functions.hpp does), so `min(i, blockDim.x)` is not ambiguous.
#define GPULAB_EMU_MINMAX(R, A, B)                                           \
  inline R min(A a, B b) { return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); } \
  inline R max(A a, B b) { return static_cast<R>(a) > static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); }
GPULAB_EMU_MINMAX(int, int, int)
GPULAB_EMU_MINMAX(unsigned, unsigned, unsigned)
GPULAB_EMU_MINMAX(unsigned, int, unsigned)
GPULAB_EMU_MINMAX(unsigned, unsigned, int)
GPULAB_EMU_MINMAX(long, long, long)
GPULAB_EMU_MINMAX(unsigned long, unsigned long, unsigned long)
GPULAB_EMU_MINMAX(unsigned long, long, unsigned long)
GPULAB_EMU_MINMAX(unsigned long, unsigned long, long)
GPULAB_EMU_MINMAX(long long, long long, long long)
GPULAB_EMU_MINMAX(unsigned long long, unsigned long long, unsigned long long)
GPULAB_EMU_MINMAX(unsigned long long, long long, unsigned long long)
GPULAB_EMU_MINMAX(unsigned long long, unsigned long long, long long)
#undef GPULAB_EMU_MINMAX
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }
inline double min(float a, double b) { return std::fmin(static_cast<double>(a), b); }
inline double max(float a, double b) { return std::fmax(static_cast<double>(a), b); }
inline double min(double a, float b) { return std::fmin(a, static_cast<double>(b)); }
inline double max(double a, float b) { return std::fmax(a, static_cast<double>(b)); }
inline int __float_as_int(float f) { return gpulab::emu::from_bits<int>(gpulab::emu::to_bits(f)); }
inline unsigned __float_as_uint(float f) {
  return gpulab::emu::from_bits<unsigned>(gpulab::emu::to_bits(f));
}
inline float __int_as_float(int i) { return gpulab::emu::from_bits<float>(gpulab::emu::to_bits(i)); }
inline float __uint_as_float(unsigned i) {
  return gpulab::emu::from_bits<float>(gpulab::emu::to_bits(i));
}
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i, x >>= 1) r = (r << 1) | (x & 1u);
  return r;
}
inline unsigned __umulhi(unsigned a, unsigned b) {
  return static_cast<unsigned>((static_cast<unsigned long long>(a) * b) >> 32);
}

// ---- cache-hinted loads and stores -------------------------------------------------------
// The hints (read-only path, streaming, L2 only, write-back, write-through...) change where a GPU
// caches the data, never the value: here they are plain loads and stores of the kernel file, so
// the tracing, the metrics and the sanitizer see them like any other access.
namespace gpulab::emu {
template <class T>
struct same_type {
  using type = T;
};
}  // namespace gpulab::emu
template <class T>
inline T __ldg(const T* p) { return *p; }
template <class T>
inline T __ldcs(const T* p) { return *p; }
template <class T>
inline T __ldcg(const T* p) { return *p; }
template <class T>
inline T __ldca(const T* p) { return *p; }
template <class T>
inline T __ldlu(const T* p) { return *p; }
template <class T>
inline T __ldcv(const T* p) { return *p; }
template <class T>
inline void __stcs(T* p, typename gpulab::emu::same_type<T>::type v) { *p = v; }
template <class T>
inline void __stcg(T* p, typename gpulab::emu::same_type<T>::type v) { *p = v; }
template <class T>
inline void __stwb(T* p, typename gpulab::emu::same_type<T>::type v) { *p = v; }
template <class T>
inline void __stwt(T* p, typename gpulab::emu::same_type<T>::type v) { *p = v; }
long long clock64();
