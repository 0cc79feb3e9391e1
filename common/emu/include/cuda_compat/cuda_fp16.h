// <cuda_fp16.h> for the gpulab emulator: __half (IEEE binary16) and __half2, with CUDA's
// conversions (round to nearest even) and arithmetic. See gpulab_emu_float16.h for how values
// are computed.
#pragma once

#include "cuda_runtime.h"
#include "gpulab_emu_float16.h"

GPULAB_EMU_FLOAT16_TYPE(__half, 10, 15)
typedef __half half;

struct alignas(4) __half2 {
  __half x, y;
};
typedef __half2 half2;

inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline __half __double2half(double d) { return __half(d); }
inline float __half2float(__half h) { return static_cast<float>(h); }
inline __half __int2half_rn(int i) { return __half(i); }
inline __half __uint2half_rn(unsigned i) { return __half(i); }
inline int __half2int_rn(__half h) { return static_cast<int>(std::nearbyint(static_cast<float>(h))); }
inline int __half2int_rz(__half h) { return static_cast<int>(static_cast<float>(h)); }
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline short __half_as_short(__half h) { return static_cast<short>(h.__x); }
inline __half __ushort_as_half(unsigned short u) {
  __half h;
  h.__x = u;
  return h;
}
inline __half __short_as_half(short s) { return __ushort_as_half(static_cast<unsigned short>(s)); }

inline __half __hadd(__half a, __half b) { return a + b; }
inline __half __hsub(__half a, __half b) { return a - b; }
inline __half __hmul(__half a, __half b) { return a * b; }
inline __half __hdiv(__half a, __half b) { return a / b; }
inline __half __hneg(__half a) { return -a; }
inline __half __habs(__half a) { return __ushort_as_half(static_cast<unsigned short>(a.__x & 0x7fffu)); }
inline __half __hfma(__half a, __half b, __half c) {
  return __half(std::fma(static_cast<double>(float(a)), static_cast<double>(float(b)), static_cast<double>(float(c))));
}
inline __half __hmax(__half a, __half b) { return __half(std::fmax(float(a), float(b))); }
inline __half __hmin(__half a, __half b) { return __half(std::fmin(float(a), float(b))); }
inline bool __heq(__half a, __half b) { return a == b; }
inline bool __hne(__half a, __half b) { return a != b; }
inline bool __hlt(__half a, __half b) { return a < b; }
inline bool __hle(__half a, __half b) { return a <= b; }
inline bool __hgt(__half a, __half b) { return a > b; }
inline bool __hge(__half a, __half b) { return a >= b; }
inline bool __hisnan(__half a) { return std::isnan(float(a)); }
inline int __hisinf(__half a) { return std::isinf(float(a)) ? (a.__x & 0x8000u ? -1 : 1) : 0; }
inline __half hsqrt(__half a) { return __half(std::sqrt(float(a))); }
inline __half hexp(__half a) { return __half(std::exp(float(a))); }
inline __half hlog(__half a) { return __half(std::log(float(a))); }
inline __half hrsqrt(__half a) { return __half(1.0f / std::sqrt(float(a))); }

inline __half2 __halves2half2(__half lo, __half hi) { return __half2{lo, hi}; }
inline __half2 __half2half2(__half a) { return __half2{a, a}; }
inline __half2 __float2half2_rn(float f) { return __half2{__half(f), __half(f)}; }
inline __half2 __floats2half2_rn(float lo, float hi) { return __half2{__half(lo), __half(hi)}; }
inline float2 __half22float2(__half2 h) { return make_float2(float(h.x), float(h.y)); }
inline __half2 __float22half2_rn(float2 f) { return __half2{__half(f.x), __half(f.y)}; }
inline __half __low2half(__half2 h) { return h.x; }
inline __half __high2half(__half2 h) { return h.y; }
inline float __low2float(__half2 h) { return float(h.x); }
inline float __high2float(__half2 h) { return float(h.y); }
inline __half2 __hadd2(__half2 a, __half2 b) { return __half2{a.x + b.x, a.y + b.y}; }
inline __half2 __hsub2(__half2 a, __half2 b) { return __half2{a.x - b.x, a.y - b.y}; }
inline __half2 __hmul2(__half2 a, __half2 b) { return __half2{a.x * b.x, a.y * b.y}; }
inline __half2 __h2div(__half2 a, __half2 b) { return __half2{a.x / b.x, a.y / b.y}; }
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return __half2{__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)}; }
inline __half2 operator+(const __half2& a, const __half2& b) { return __hadd2(a, b); }
inline __half2 operator-(const __half2& a, const __half2& b) { return __hsub2(a, b); }
inline __half2 operator*(const __half2& a, const __half2& b) { return __hmul2(a, b); }
