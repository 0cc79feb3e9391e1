// Launch-configuration checks shared by every back-end: the limits of CUDA and HIP devices,
// explained in the student's terms before the runtime's terse "invalid configuration".
#include <algorithm>
#include <map>
#include <mutex>
#include <sstream>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"

namespace gpulab {
namespace {
std::string dims(dim3 d) {
  std::ostringstream os;
  os << "(" << d.x << "," << d.y << "," << d.z << ")";
  return os.str();
}
}  // namespace

#if !defined(GPULAB_BACKEND_EMU)
void set_kernel_dynamic_shared(const void* kernel, std::size_t bytes, const char* file, int line);  // host_gpu.cpp
#endif

namespace {
std::mutex g_limits_mutex;
std::map<const void*, std::size_t>& dynamic_limits() {
  static std::map<const void*, std::size_t> m;
  return m;
}
}  // namespace

void allow_dynamic_shared_bytes(const void* kernel, std::size_t bytes, const char* file, int line) {
  static const DeviceInfo info = device_info();
  if (bytes > info.shared_per_block_optin)
    throw Error(Error::location(file, line),
                "set_max_dynamic_shared asks for " + std::to_string(bytes) + " bytes; this device gives a block at most " +
                    std::to_string(info.shared_per_block_optin));
#if !defined(GPULAB_BACKEND_EMU)
  set_kernel_dynamic_shared(kernel, bytes, file, line);
#endif
  std::lock_guard<std::mutex> lock(g_limits_mutex);
  dynamic_limits()[kernel] = bytes;
}

std::size_t dynamic_shared_limit(const void* kernel) {
  static const DeviceInfo info = device_info();
  std::size_t limit = info.shared_per_block;
  // An unknown kernel (the emulator's launch of a kernel template by call, whose address it never
  // sees) may use what any kernel was allowed: a launch that is right is not refused.
  std::lock_guard<std::mutex> lock(g_limits_mutex);
  if (!kernel) {
    for (const auto& [k, bytes] : dynamic_limits()) limit = std::max(limit, bytes);
  } else if (auto it = dynamic_limits().find(kernel); it != dynamic_limits().end()) {
    limit = std::max(limit, it->second);
  }
  return limit;
}

LaunchProblem launch_config_problem(const LaunchGrid& grid, dim3 block, std::size_t shared_bytes,
                                    const void* kernel) {
  const unsigned long long threads = 1ull * block.x * block.y * block.z;
  static const DeviceInfo info = device_info();
  using K = LaunchProblem::Kind;
  if (threads == 0 || grid.dims.x == 0 || grid.dims.y == 0 || grid.dims.z == 0)
    return {K::configuration, "launch with an empty grid " + dims(grid.dims) + " or block " + dims(block),
            "every dimension must be at least 1; for a problem of size n, use "
            "(n + threads - 1) / threads blocks, which is 0 only when n is 0"};
  if (threads > static_cast<unsigned long long>(info.max_threads_per_block) || block.x > 1024 ||
      block.y > 1024 || block.z > 64)
    return {K::configuration,
            "block " + dims(block) + " has " + std::to_string(threads) + " threads; a block holds at most " +
                std::to_string(info.max_threads_per_block) + " threads (x, y <= 1024, z <= 64)",
            "use more blocks of fewer threads"};
  if (grid.dims.y > 65535 || grid.dims.z > 65535 || grid.dims.x > 2147483647u)
    return {K::configuration, "grid " + dims(grid.dims) + " exceeds the limits (x < 2^31, y, z <= 65535)",
            "put the large dimension in x"};
  const std::size_t limit = dynamic_shared_limit(kernel);
  if (shared_bytes > limit)
    return {K::shared_memory,
            "the launch asks for " + std::to_string(shared_bytes) +
                " bytes of dynamic shared memory; this kernel may use " + std::to_string(limit),
            "use smaller tiles, or allow more first with gpulab::set_max_dynamic_shared(kernel, bytes) / "
            "cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) (up to " +
                std::to_string(info.shared_per_block_optin) + " on this device)"};
  return {};
}

void check_launch_config(const LaunchGrid& grid, dim3 block, std::size_t shared_bytes, const void* kernel) {
  const LaunchProblem p = launch_config_problem(grid, block, shared_bytes, kernel);
  if (p.kind != LaunchProblem::Kind::none) throw Error(Error::location(grid.file, grid.line), p.what, p.hint);
}

}  // namespace gpulab
