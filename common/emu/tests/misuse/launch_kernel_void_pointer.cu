// cudaLaunchKernel with the kernel cast to `const void*` (CUDA's C form): the emulator cannot
// unpack the arguments without the kernel's parameter types, and its compile error says what to
// write instead (ctest emu_launch_kernel_void_pointer_says_why).
#include <cuda_runtime.h>

__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }

cudaError_t run(float* x, float a) {
  void* args[] = {&x, &a};
  return cudaLaunchKernel(reinterpret_cast<const void*>(scale), dim3(1), dim3(32), args, 0, nullptr);
}
