// ./gpulab run test: the first block reads a neighbour's shared word without a barrier after the
// writes (a race), the others read their own; with --checks=sample the first block is always
// checked, so the race is found.
#include <cuda_runtime.h>
#include <cstdio>
__global__ void shift_without_barrier(const float* in, float* out) {
  __shared__ float v[256];
  v[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  const unsigned from = blockIdx.x == 0 ? (threadIdx.x + 1) % blockDim.x : threadIdx.x;
  out[blockIdx.x * blockDim.x + threadIdx.x] = v[from];
}
int main() {
  const int blocks = 64, threads = 256, n = blocks * threads;
  float *in = nullptr, *out = nullptr;
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&out, n * sizeof(float));
  cudaMemset(in, 0, n * sizeof(float));
  shift_without_barrier<<<blocks, threads>>>(in, out);
  std::printf("sync: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
