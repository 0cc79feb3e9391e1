// A plain CUDA program, as it would be written for nvcc: no gpulab header, <<<>>> launches,
// a template kernel, a launch inside a function template, dynamic shared memory, a stream
// argument. Built by gpulab_emu_cuda_executable; the test expects the launch error of the
// oversized block to name line 45 (the `<<<` line), then "all launches ran".
#include <cstdio>
#include <vector>

template <typename T, int Scale>
__global__ void scale(T* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= Scale;
}

// (`extern __shared__` is not supported by the emulator yet: gpulab::dynamic_shared<T>() is.)
__global__ void add_one(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

template <class T>
void run_scale(T* d, int n) {
  scale<T, 2><<<(n + 63) / 64, dim3(64)>>>(d, n);
}

int main() {
  const int n = 1000;
  std::vector<float> h(n, 1.0f);
  float* d = nullptr;
  cudaMalloc(&d, n * sizeof(float));
  cudaMemcpy(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaStream_t stream = nullptr;
  add_one<<<(n + 127) / 128, 128, 64 * sizeof(float), stream>>>(d, n);  // 2
  run_scale(d, n);                                                         // 4
  void (*fp)(float*, int) = add_one;
  fp<<<
      dim3((n + 255) / 256),
      256>>>(d,
             n);  // 5
  cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i)
    if (h[i] != 5.0f) return std::printf("x[%d] = %g, expected 5\n", i, h[i]), 1;
  // A block of 2048 threads is refused; the message names this file and the `<<<` line (45).
  try {
    add_one
        <<<1, 2048>>>(d, n);
  } catch (const std::exception& e) {
    std::printf("%s\n", e.what());
  }
  cudaFree(d);
  std::printf("all launches ran\n");
  return 0;
}
