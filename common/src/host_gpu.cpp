// Host helpers for the GPU back-ends. CUDA and HIP share this file: their runtime APIs differ
// only in prefix, which the gpu* names below hide.
// Compiled by nvcc (cuda preset) or hipcc (rocm preset), so that gpulab/gpu.hpp picks the
// right runtime.
#include <sstream>

#include "gpulab/gpu.hpp"

#if defined(GPULAB_BACKEND_HIP)
#define gpuError_t hipError_t
#define gpuSuccess hipSuccess
#define gpuGetErrorString hipGetErrorString
#define gpuGetErrorName hipGetErrorName
#define gpuGetLastError hipGetLastError
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMemcpy hipMemcpy
#define gpuMemset hipMemset
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuDeviceProp hipDeviceProp_t
#define gpuGetDevice hipGetDevice
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuDeviceGetAttribute hipDeviceGetAttribute
#define gpuDriverGetVersion hipDriverGetVersion
#define gpuRuntimeGetVersion hipRuntimeGetVersion
#define gpuEvent_t hipEvent_t
#define gpuEventCreate hipEventCreate
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuAttrClockRate hipDeviceAttributeClockRate
#define gpuAttrMemoryClockRate hipDeviceAttributeMemoryClockRate
#define gpuAttrBusWidth hipDeviceAttributeMemoryBusWidth
#define GPULAB_BACKEND_NAME "rocm"
#define GPULAB_RUNTIME_NAME "HIP"
#else
#define gpuError_t cudaError_t
#define gpuSuccess cudaSuccess
#define gpuGetErrorString cudaGetErrorString
#define gpuGetErrorName cudaGetErrorName
#define gpuGetLastError cudaGetLastError
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMemcpy cudaMemcpy
#define gpuMemset cudaMemset
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuDeviceProp cudaDeviceProp
#define gpuGetDevice cudaGetDevice
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuDeviceGetAttribute cudaDeviceGetAttribute
#define gpuDriverGetVersion cudaDriverGetVersion
#define gpuRuntimeGetVersion cudaRuntimeGetVersion
#define gpuEvent_t cudaEvent_t
#define gpuEventCreate cudaEventCreate
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuAttrClockRate cudaDevAttrClockRate
#define gpuAttrMemoryClockRate cudaDevAttrMemoryClockRate
#define gpuAttrBusWidth cudaDevAttrGlobalMemoryBusWidth
#define GPULAB_BACKEND_NAME "cuda"
#define GPULAB_RUNTIME_NAME "CUDA"
#endif

#include "gpulab/host.hpp"

namespace gpulab {
namespace {

std::string hint_for(gpuError_t e) {
  const std::string name = gpuGetErrorName(e);
  if (name.find("IllegalAddress") != std::string::npos || name.find("illegal") != std::string::npos)
    return "a kernel read or wrote outside its arrays: check every index against its bound "
           "(the CPU emulator names the thread and line)";
  if (name.find("MemoryAllocation") != std::string::npos || name.find("OutOfMemory") != std::string::npos)
    return "the device is out of memory: free buffers you no longer need, or use smaller sizes";
  if (name.find("InvalidConfiguration") != std::string::npos)
    return "check the grid and block sizes of the launch";
  if (name.find("NoDevice") != std::string::npos || name.find("InsufficientDriver") != std::string::npos)
    return "no usable GPU: grade on the emulator with `./gpulab grade --backend emu`";
  return {};
}

[[noreturn]] void fail(gpuError_t e, const std::string& what, const char* file, int line) {
  throw Error(Error::location(file, line),
              what + " failed: " + gpuGetErrorString(e) + " (" + gpuGetErrorName(e) + ")",
              hint_for(e));
}

void check(gpuError_t e, const char* what, const char* file, int line) {
  if (e != gpuSuccess) fail(e, what, file, line);
}

}  // namespace

const char* backend() { return GPULAB_BACKEND_NAME; }

void check_status(int status, const char* expr, const char* file, int line) {
  if (status != 0) fail(static_cast<gpuError_t>(status), expr, file, line);
}

DeviceInfo device_info() {
  int dev = 0;
  check(gpuGetDevice(&dev), GPULAB_RUNTIME_NAME " get device", __FILE__, __LINE__);
  gpuDeviceProp p{};
  check(gpuGetDeviceProperties(&p, dev), GPULAB_RUNTIME_NAME " device properties", __FILE__, __LINE__);
  DeviceInfo d;
  d.name = p.name;
  d.multiprocessors = p.multiProcessorCount;
  d.warp_size = p.warpSize;
  d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  d.shared_per_block = p.sharedMemPerBlock;
#if defined(GPULAB_BACKEND_HIP)
  d.shared_per_block_optin = p.maxSharedMemoryPerMultiProcessor ? p.maxSharedMemoryPerMultiProcessor : p.sharedMemPerBlock;
#else
  d.shared_per_block_optin = p.sharedMemPerBlockOptin ? p.sharedMemPerBlockOptin : p.sharedMemPerBlock;
#endif
  d.global_bytes = p.totalGlobalMem;
  d.max_threads_per_block = p.maxThreadsPerBlock;
  gpuDeviceGetAttribute(&d.clock_khz, gpuAttrClockRate, dev);
  gpuDeviceGetAttribute(&d.memory_clock_khz, gpuAttrMemoryClockRate, dev);
  gpuDeviceGetAttribute(&d.memory_bus_bits, gpuAttrBusWidth, dev);
  int drv = 0, rt = 0;
  gpuDriverGetVersion(&drv);
  gpuRuntimeGetVersion(&rt);
  std::ostringstream os;
  os << GPULAB_RUNTIME_NAME << " driver " << drv << ", runtime " << rt;
  d.driver = os.str();
  return d;
}

void* device_malloc(std::size_t bytes, const char* file, int line) {
  void* p = nullptr;
  check(gpuMalloc(&p, bytes ? bytes : 1), "device_malloc", file, line);
  return p;
}
void device_free(void* p) noexcept {
  if (p) (void)gpuFree(p);
}
void copy_to_device(void* dst, const void* src, std::size_t bytes, const char* file, int line) {
  check(gpuMemcpy(dst, src, bytes, gpuMemcpyHostToDevice), "copy_to_device", file, line);
}
void copy_to_host(void* dst, const void* src, std::size_t bytes, const char* file, int line) {
  check(gpuMemcpy(dst, src, bytes, gpuMemcpyDeviceToHost), "copy_to_host", file, line);
}
void copy_device_to_device(void* dst, const void* src, std::size_t bytes, const char* file, int line) {
  check(gpuMemcpy(dst, src, bytes, gpuMemcpyDeviceToDevice), "copy_device_to_device", file, line);
}
void fill_bytes(void* p, int value, std::size_t bytes, const char* file, int line) {
  check(gpuMemset(p, value, bytes), "fill_bytes", file, line);
}
void synchronize(const char* file, int line) {
  check(gpuDeviceSynchronize(), "a kernel (seen at synchronize)", file, line);
}

void set_kernel_dynamic_shared(const void* kernel, std::size_t bytes, const char* file, int line) {
#if defined(GPULAB_BACKEND_HIP)
  check(hipFuncSetAttribute(kernel, hipFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
        "set_max_dynamic_shared", file, line);
#else
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
        "set_max_dynamic_shared", file, line);
#endif
}

void check_launch(const LaunchGrid& grid, dim3, std::size_t) {
  check(gpuGetLastError(), "kernel launch", grid.file, grid.line);
}

Event::Event() {
  gpuEvent_t e;
  check(gpuEventCreate(&e), "event create", __FILE__, __LINE__);
  handle_ = e;
}
Event::~Event() { (void)gpuEventDestroy(static_cast<gpuEvent_t>(handle_)); }
void Event::record() {
  check(gpuEventRecord(static_cast<gpuEvent_t>(handle_), 0), "event record", __FILE__, __LINE__);
}
float Event::elapsed_ms_since(const Event& start) const {
  check(gpuEventSynchronize(static_cast<gpuEvent_t>(handle_)), "event synchronize", __FILE__, __LINE__);
  float ms = 0;
  check(gpuEventElapsedTime(&ms, static_cast<gpuEvent_t>(start.handle_), static_cast<gpuEvent_t>(handle_)),
        "event elapsed time", __FILE__, __LINE__);
  return ms;
}

}  // namespace gpulab
