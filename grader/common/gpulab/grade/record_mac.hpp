// gpulab/grade/record_mac.hpp - the tags that authenticate the events of a runner's record.
//
// The grader makes a fresh random key for each run of a lab process and hands it to the runner
// through a pipe the runner reads once at start-up (gpulab/grade/kit.hpp), and to the judge.
// Each event the runner sends carries a tag: SipHash-2-4 (J.-P. Aumasson and D. J. Bernstein,
// "SipHash: a fast short-input PRF", 2012) under that key of the event's number, the previous
// event's tag, its size and its bytes. The tags chain: an event cannot be dropped, reordered,
// replayed from another run (another key) or written by anything that lacks the key.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace gpulab::grade::record_mac {

using Key = std::array<std::uint8_t, 16>;

/// SipHash-2-4 over a message given in pieces (update), 64-bit result (finish).
class SipHash {
 public:
  explicit SipHash(const Key& key) {
    const std::uint64_t k0 = load(key.data()), k1 = load(key.data() + 8);
    v_[0] = k0 ^ 0x736f6d6570736575ull;
    v_[1] = k1 ^ 0x646f72616e646f6dull;
    v_[2] = k0 ^ 0x6c7967656e657261ull;
    v_[3] = k1 ^ 0x7465646279746573ull;
  }

  void update(const void* data, std::size_t n) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    length_ += n;
    while (n > 0 && pending_ > 0) {  // complete the partial word first
      word_ |= static_cast<std::uint64_t>(*p++) << (8 * pending_);
      --n;
      if (++pending_ == 8) absorb(word_), word_ = 0, pending_ = 0;
    }
    for (; n >= 8; n -= 8, p += 8) absorb(load(p));
    for (; n > 0; --n) word_ |= static_cast<std::uint64_t>(*p++) << (8 * pending_++);
  }
  void update_u64(std::uint64_t v) {
    std::uint8_t b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<std::uint8_t>(v >> (8 * i));
    update(b, 8);
  }

  std::uint64_t finish() {
    absorb(word_ | (static_cast<std::uint64_t>(length_ & 0xff) << 56));
    v_[2] ^= 0xff;
    for (int i = 0; i < 4; ++i) round();
    return v_[0] ^ v_[1] ^ v_[2] ^ v_[3];
  }

 private:
  static std::uint64_t load(const std::uint8_t* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
  }
  static std::uint64_t rotl(std::uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }
  void round() {
    std::uint64_t* v = v_;
    v[0] += v[1], v[1] = rotl(v[1], 13), v[1] ^= v[0], v[0] = rotl(v[0], 32);
    v[2] += v[3], v[3] = rotl(v[3], 16), v[3] ^= v[2];
    v[0] += v[3], v[3] = rotl(v[3], 21), v[3] ^= v[0];
    v[2] += v[1], v[1] = rotl(v[1], 17), v[1] ^= v[2], v[2] = rotl(v[2], 32);
  }
  void absorb(std::uint64_t m) {
    v_[3] ^= m;
    round();
    round();
    v_[0] ^= m;
  }

  std::uint64_t v_[4];
  std::uint64_t word_ = 0;  // the bytes of a word not yet complete
  int pending_ = 0;
  std::uint64_t length_ = 0;
};

/// The tag of event number `index` (0, 1, ... in the order sent), chained to the previous
/// event's tag (0 for the first).
inline std::uint64_t event_tag(const Key& key, std::uint64_t index, std::uint64_t previous, const void* bytes,
                               std::size_t size) {
  SipHash h(key);
  h.update_u64(index);
  h.update_u64(previous);
  h.update_u64(size);
  h.update(bytes, size);
  return h.finish();
}

inline std::string to_hex(const Key& key) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : key) s += digits[b >> 4], s += digits[b & 15];
  return s;
}

/// False unless `hex` is 32 hexadecimal digits.
inline bool from_hex(const std::string& hex, Key& key) {
  if (hex.size() != 2 * key.size()) return false;
  auto value = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
  };
  for (std::size_t i = 0; i < key.size(); ++i) {
    const int hi = value(hex[2 * i]), lo = value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    key[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return true;
}

}  // namespace gpulab::grade::record_mac
