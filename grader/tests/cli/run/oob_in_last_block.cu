// ./gpulab run test: the last block reads one element past the end of its input; with
// --checks=sample the last block is always checked, so the read is stopped and reported.
#include <cuda_runtime.h>
#include <cstdio>
__global__ void copy_one_past(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int from = blockIdx.x + 1 == gridDim.x && threadIdx.x + 1 == blockDim.x ? i + 1 : i;
  if (i < n) out[i] = in[from];
}
int main() {
  const int blocks = 64, threads = 256, n = blocks * threads;
  float *in = nullptr, *out = nullptr;
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&out, n * sizeof(float));
  cudaMemset(in, 0, n * sizeof(float));
  copy_one_past<<<blocks, threads>>>(in, out, n);
  std::printf("sync: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
