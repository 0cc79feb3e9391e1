// A whole CUDA program around one kernel: what the grader does around your functions. Not graded;
// run it, change it, break it (lesson, sections 2, 3 and 7):
//
//   ./gpulab run labs/00-first-kernels/whole_program.cu             n = 1000, blocks of 256 threads
//   ./gpulab run labs/00-first-kernels/whole_program.cu 1000 2048   a block too large: see the error
//
// On an NVIDIA machine the same file also builds on its own: nvcc -o whole_program whole_program.cu
#include <cstdio>
#include <cstdlib>
#include <vector>

// Error checking: every runtime call returns a cudaError_t. Stop at the first failure, with the
// file, the line, the call and the runtime's explanation.
#define CHECK(call)                                                                              \
  do {                                                                                           \
    const cudaError_t status_ = (call);                                                          \
    if (status_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                  \
                   cudaGetErrorString(status_));                                                 \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

// y[i] = a * x[i] + y[i], one element per thread.
__global__ void saxpy(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 256;
  const float a = 2.0f;

  // 1. Data on the host (the CPU's memory).
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i), y[i] = 1.0f;

  // 2. Memory on the device, and the inputs copied there (host to device).
  float *d_x = nullptr, *d_y = nullptr;
  CHECK(cudaMalloc(&d_x, n * sizeof(float)));
  CHECK(cudaMalloc(&d_y, n * sizeof(float)));
  CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_y, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  // 3. The launch, between two events. A launch returns at once: a bad configuration shows in
  //    cudaGetLastError(), a fault inside the kernel only when the host next waits for it.
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  const int blocks = (n + threads - 1) / threads;  // rounded up: the last block may be partial
  CHECK(cudaEventRecord(start));
  saxpy<<<blocks, threads>>>(n, a, d_x, d_y);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));  // the host waits here until the kernel has finished
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));

  // 4. The result back to the host (device to host), and checked.
  CHECK(cudaMemcpy(y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += y[i] != a * static_cast<float>(i) + 1.0f;
  std::printf("saxpy: n = %d, %d block(s) of %d threads, %d wrong, %.3f ms between the events\n", n, blocks,
              threads, wrong, ms);

  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d_x));
  CHECK(cudaFree(d_y));
  return wrong != 0;
}
