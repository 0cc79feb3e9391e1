// ./gpulab run test: half of a block returns while the other half waits at a barrier; the
// emulator must report it with or without --no-checks (the scheduler checks barriers itself).
#include <cuda_runtime.h>
#include <cstdio>
__global__ void half_at_barrier(int* out) {
  if (threadIdx.x < 16) __syncthreads();
  out[threadIdx.x] = 1;
}
int main() {
  int* d = nullptr;
  cudaMalloc(&d, 64 * sizeof(int));
  half_at_barrier<<<1, 64>>>(d);
  std::printf("sync: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
