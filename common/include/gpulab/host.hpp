// gpulab/host.hpp - host-side helpers that work on every back-end: device memory, copies,
// synchronisation, event timing, device properties.
//
// Every helper throws gpulab::Error (file:line of the caller, what failed, a hint) instead of
// returning an error code.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/error.hpp"

namespace gpulab {

/// "emu", "cuda" or "rocm": the back-end this program was built for.
const char* backend();

/// What the grader and the lessons need to know about the device.
struct DeviceInfo {
  std::string name;                  ///< e.g. "NVIDIA H200", or "gpulab CPU emulator"
  int multiprocessors = 0;           ///< SMs (CUDA) / CUs (ROCm) / emulator workers
  int warp_size = 0;                 ///< 32 on NVIDIA, 64 (or 32) on AMD, chosen per run on emu
  std::size_t l2_bytes = 0;          ///< last-level cache of the device
  std::size_t shared_per_block = 0;  ///< default shared-memory limit of one block
  std::size_t shared_per_block_optin = 0;  ///< the most a block may use after set_max_dynamic_shared
  std::size_t global_bytes = 0;      ///< device memory
  int max_threads_per_block = 1024;
  int clock_khz = 0;                 ///< SM clock (0 where unknown)
  int memory_clock_khz = 0;
  int memory_bus_bits = 0;
  std::string driver;                ///< driver / runtime versions
};
DeviceInfo device_info();

// ---- raw memory --------------------------------------------------------------------------
void* device_malloc(std::size_t bytes, const char* file = __builtin_FILE(),
                    int line = __builtin_LINE());
void device_free(void* p) noexcept;
void copy_to_device(void* dst, const void* src, std::size_t bytes,
                    const char* file = __builtin_FILE(), int line = __builtin_LINE());
void copy_to_host(void* dst, const void* src, std::size_t bytes,
                  const char* file = __builtin_FILE(), int line = __builtin_LINE());
void copy_device_to_device(void* dst, const void* src, std::size_t bytes,
                           const char* file = __builtin_FILE(), int line = __builtin_LINE());
/// Sets every byte of [p, p+bytes) to `value` (e.g. 0xFF to poison float outputs with NaN).
void fill_bytes(void* p, int value, std::size_t bytes, const char* file = __builtin_FILE(),
                int line = __builtin_LINE());

/// Waits for all launched work; throws gpulab::Error if a kernel faulted (illegal address,
/// divergent barrier on the emulator, ...).
void synchronize(const char* file = __builtin_FILE(), int line = __builtin_LINE());

// ---- typed buffer ------------------------------------------------------------------------
/// Owning device array of `n` elements of T (RAII: freed when it goes out of scope).
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n, const char* file = __builtin_FILE(),
                        int line = __builtin_LINE())
      : ptr_(static_cast<T*>(device_malloc(n * sizeof(T), file, line))), n_(n) {}
  explicit DeviceBuffer(const std::vector<T>& host, const char* file = __builtin_FILE(),
                        int line = __builtin_LINE())
      : DeviceBuffer(host.size(), file, line) {
    copy_to_device(ptr_, host.data(), host.size() * sizeof(T), file, line);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      device_free(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { device_free(ptr_); }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }

  void upload(const std::vector<T>& host, const char* file = __builtin_FILE(),
              int line = __builtin_LINE()) {
    if (host.size() != n_)
      throw Error(Error::location(file, line),
                  "upload of " + std::to_string(host.size()) + " elements into a buffer of " +
                      std::to_string(n_));
    copy_to_device(ptr_, host.data(), bytes(), file, line);
  }
  std::vector<T> download(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    std::vector<T> host(n_);
    copy_to_host(host.data(), ptr_, bytes(), file, line);
    return host;
  }
  /// Fills the buffer with 0xFF bytes: NaN for floats, -1 for signed integers.
  void poison(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    fill_bytes(ptr_, 0xFF, bytes(), file, line);
  }

 private:
  T* ptr_ = nullptr;
  std::size_t n_ = 0;
};

// ---- timing ------------------------------------------------------------------------------
/// A point in the device's stream of work (cudaEvent / hipEvent; a host clock on emu).
class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record();
  /// Milliseconds from `start` to this event (waits for this event).
  float elapsed_ms_since(const Event& start) const;

 private:
  void* handle_ = nullptr;
};

}  // namespace gpulab
