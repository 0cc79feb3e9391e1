// cuBLAS or rocBLAS through dlopen: the lab's executables do not link the vendor library, so
// the implementation being graded cannot call it (and the grader refuses objects that reference
// it or dlopen).
#include "vendor_blas.hpp"

#include <dlfcn.h>

#include <stdexcept>

#if defined(GPULAB_BUILD_BACKEND_CUDA)
#include <cublas_v2.h>
#endif

namespace lab06 {
namespace {

[[maybe_unused]] void* open_first(std::initializer_list<const char*> names, std::string& tried) {
  for (const char* n : names) {
    if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) return h;
    tried += std::string(tried.empty() ? "" : ", ") + n;
  }
  return nullptr;
}

#if defined(GPULAB_BUILD_BACKEND_CUDA)
struct Vendor {
  void* lib = nullptr;
  cublasHandle_t handle = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  std::string error, name = "cuBLAS";
  Vendor() {
    std::string tried;
    lib = open_first({"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, tried);
    if (!lib) {
      error = "cuBLAS not found (tried " + tried + ")";
      return;
    }
    auto create = reinterpret_cast<decltype(&cublasCreate_v2)>(dlsym(lib, "cublasCreate_v2"));
    auto math = reinterpret_cast<decltype(&cublasSetMathMode)>(dlsym(lib, "cublasSetMathMode"));
    auto version = reinterpret_cast<decltype(&cublasGetVersion_v2)>(dlsym(lib, "cublasGetVersion_v2"));
    sgemm = reinterpret_cast<decltype(&cublasSgemm_v2)>(dlsym(lib, "cublasSgemm_v2"));
    if (!create || !math || !sgemm || create(&handle) != CUBLAS_STATUS_SUCCESS) {
      error = "cuBLAS could not be initialised";
      return;
    }
    // Plain FP32: the default math mode, explicitly without TF32 tensor-core arithmetic.
    math(handle, CUBLAS_DEFAULT_MATH);
    int v = 0;
    if (version && version(handle, &v) == CUBLAS_STATUS_SUCCESS)
      name += " " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
  }
  void run(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    // Row-major C = A B is column-major C^T = B^T A^T: swap the operands.
    if (sgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N) != CUBLAS_STATUS_SUCCESS)
      throw std::runtime_error("cublasSgemm failed");
  }
};
#elif defined(GPULAB_BUILD_BACKEND_ROCM)
// The few rocBLAS declarations needed (so that the rocm preset builds without rocBLAS installed).
using rocblas_handle = void*;
using create_fn = int (*)(rocblas_handle*);
using sgemm_fn = int (*)(rocblas_handle, int, int, int, int, int, const float*, const float*, int, const float*,
                         int, const float*, float*, int);
constexpr int kRocblasOperationNone = 111;
struct Vendor {
  void* lib = nullptr;
  rocblas_handle handle = nullptr;
  sgemm_fn sgemm = nullptr;
  std::string error, name = "rocBLAS";
  Vendor() {
    std::string tried;
    lib = open_first({"librocblas.so", "librocblas.so.4", "librocblas.so.0"}, tried);
    if (!lib) {
      error = "rocBLAS not found (tried " + tried + "); install rocblas to grade performance";
      return;
    }
    auto create = reinterpret_cast<create_fn>(dlsym(lib, "rocblas_create_handle"));
    sgemm = reinterpret_cast<sgemm_fn>(dlsym(lib, "rocblas_sgemm"));
    if (!create || !sgemm || create(&handle) != 0) error = "rocBLAS could not be initialised";
  }
  void run(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    if (sgemm(handle, kRocblasOperationNone, kRocblasOperationNone, N, M, K, &alpha, B, N, A, K, &beta, C, N) != 0)
      throw std::runtime_error("rocblas_sgemm failed");
  }
};
#else
struct Vendor {
  std::string error = "the emulator has no vendor library", name = "none";
  void run(int, int, int, float, const float*, const float*, float, float*) {
    throw std::runtime_error(error);
  }
};
#endif

Vendor& vendor() {
  static Vendor v;
  return v;
}

}  // namespace

bool vendor_available(std::string& why) {
  why = vendor().error;
  return why.empty();
}
std::string vendor_name() { return vendor().name; }
void vendor_sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  vendor().run(M, N, K, alpha, A, B, beta, C);
}

}  // namespace lab06
