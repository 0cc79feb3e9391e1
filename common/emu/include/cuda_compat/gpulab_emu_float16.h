// 16-bit floating-point types for the gpulab emulator's <cuda_fp16.h> and <cuda_bf16.h>: storage
// of 16 bits, arithmetic in float, conversions rounded to nearest, ties to even (as
// __float2half / __float2bfloat16 on a GPU), with subnormals, infinities and NaN.
//
// Arithmetic goes through float and rounds once to the 16-bit type: float's 24-bit significand
// is more than twice the 11 (8) bits of half (bfloat16) plus two, so +, -, *, / and sqrt are
// correctly rounded, as the GPU's instructions are. fma goes through double.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace gpulab::emu::fp16 {

/// Rounds `v` to a floating-point format with `mant` stored significand bits and exponent bias
/// `bias` (maximum exponent bias, minimum normal exponent 1 - bias); returns its bit pattern.
inline std::uint16_t round_to_bits(double v, int mant, int bias) {
  const int exp_bits_all = (1 << (15 - mant)) - 1;  // all-ones exponent field
  const std::uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  if (std::isnan(v)) return static_cast<std::uint16_t>(sign | (exp_bits_all << mant) | (1u << (mant - 1)));
  const double a = std::fabs(v);
  if (std::isinf(a)) return static_cast<std::uint16_t>(sign | (exp_bits_all << mant));
  if (a == 0.0) return sign;
  int e = std::ilogb(a);
  if (e < 1 - bias) {  // subnormal: multiples of 2^(1 - bias - mant); the scaling is exact
    const double r = std::nearbyint(std::ldexp(a, bias - 1 + mant));
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(r));  // r == 2^mant: the smallest normal
  }
  double r = std::nearbyint(std::ldexp(a, mant - e));  // in [2^mant, 2^(mant+1)]
  if (r == std::ldexp(1.0, mant + 1)) {
    r /= 2;
    ++e;
  }
  if (e + bias >= exp_bits_all) return static_cast<std::uint16_t>(sign | (exp_bits_all << mant));  // overflow: inf
  return static_cast<std::uint16_t>(sign | ((e + bias) << mant) |
                                    (static_cast<std::uint16_t>(r) - (1u << mant)));
}

/// The value of a bit pattern of that format.
inline float from_bits(std::uint16_t b, int mant, int bias) {
  const int exp_bits_all = (1 << (15 - mant)) - 1;
  const int e = (b >> mant) & exp_bits_all;
  const unsigned m = b & ((1u << mant) - 1);
  float v;
  if (e == exp_bits_all) v = m ? NAN : INFINITY;
  else if (e == 0) v = std::ldexp(static_cast<float>(m), 1 - bias - mant);
  else v = std::ldexp(static_cast<float>(m | (1u << mant)), e - bias - mant);
  return (b & 0x8000) ? -v : v;
}

}  // namespace gpulab::emu::fp16

/// Defines a 16-bit type NAME (significand MANT bits, exponent bias BIAS) with CUDA's implicit
/// conversions and operators.
#define GPULAB_EMU_FLOAT16_TYPE(NAME, MANT, BIAS)                                                           \
  struct alignas(2) NAME {                                                                                 \
    unsigned short __x;                                                                                    \
    NAME() = default;                                                                                      \
    NAME(float f) : __x(::gpulab::emu::fp16::round_to_bits(f, MANT, BIAS)) {}                              \
    NAME(double d) : __x(::gpulab::emu::fp16::round_to_bits(d, MANT, BIAS)) {}                             \
    NAME(int i) : __x(::gpulab::emu::fp16::round_to_bits(static_cast<double>(i), MANT, BIAS)) {}           \
    NAME(unsigned i) : __x(::gpulab::emu::fp16::round_to_bits(static_cast<double>(i), MANT, BIAS)) {}      \
    NAME(long long i) : __x(::gpulab::emu::fp16::round_to_bits(static_cast<double>(i), MANT, BIAS)) {}     \
    operator float() const { return ::gpulab::emu::fp16::from_bits(__x, MANT, BIAS); }                    \
    NAME& operator+=(const NAME& o) { return *this = NAME(float(*this) + float(o)); }                      \
    NAME& operator-=(const NAME& o) { return *this = NAME(float(*this) - float(o)); }                      \
    NAME& operator*=(const NAME& o) { return *this = NAME(float(*this) * float(o)); }                      \
    NAME& operator/=(const NAME& o) { return *this = NAME(float(*this) / float(o)); }                      \
  };                                                                                                       \
  inline NAME operator+(const NAME& a, const NAME& b) { return NAME(float(a) + float(b)); }               \
  inline NAME operator-(const NAME& a, const NAME& b) { return NAME(float(a) - float(b)); }               \
  inline NAME operator*(const NAME& a, const NAME& b) { return NAME(float(a) * float(b)); }               \
  inline NAME operator/(const NAME& a, const NAME& b) { return NAME(float(a) / float(b)); }               \
  inline NAME operator-(const NAME& a) {                                                                   \
    NAME r;                                                                                                \
    r.__x = static_cast<unsigned short>(a.__x ^ 0x8000u);                                                  \
    return r;                                                                                              \
  }                                                                                                        \
  inline NAME operator+(const NAME& a) { return a; }                                                       \
  inline bool operator==(const NAME& a, const NAME& b) { return float(a) == float(b); }                   \
  inline bool operator!=(const NAME& a, const NAME& b) { return float(a) != float(b); }                   \
  inline bool operator<(const NAME& a, const NAME& b) { return float(a) < float(b); }                     \
  inline bool operator<=(const NAME& a, const NAME& b) { return float(a) <= float(b); }                   \
  inline bool operator>(const NAME& a, const NAME& b) { return float(a) > float(b); }                     \
  inline bool operator>=(const NAME& a, const NAME& b) { return float(a) >= float(b); }
