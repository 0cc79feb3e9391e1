// Idiom: a structure of arrays of scalars (16 float arrays, one per component) handed to the
// kernels as a struct of pointers passed by value, built by a __host__ __device__ helper; every
// kernel a grid-stride loop over a grid sized by cudaOccupancyMaxActiveBlocksPerMultiprocessor.
// Its distances read x, y, z only and its step leaves position.w, velocity.w and the seed alone:
// fewer bytes than the float4 arrays of the reference.
// expect: lab pass
#include <cuda_runtime.h>

#include "aos_soa.hpp"

namespace {

constexpr int kThreads = 256;

// Component k (0..15) of every particle: field k / 4, lane k % 4 of that float4.
struct Components {
  float* c[16];
};

__host__ __device__ inline Components components_of(float4* store, int n) {
  Components v;
  float* base = reinterpret_cast<float*>(store);
  for (int k = 0; k < 16; ++k) v.c[k] = base + static_cast<long long>(k) * n;
  return v;
}

int grid_for(const void* kernel, int n) {
  int device = 0, sms = 0, per_sm = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0);
  const int needed = (n + kThreads - 1) / kThreads;
  const int resident = sms * (per_sm > 0 ? per_sm : 1);
  return needed < resident ? needed : resident;
}

// The conversions go through a shared tile of kThreads particles, so that both sides move
// consecutive addresses: float4 runs of the AoS side, float runs of each component's array.
__global__ void to_components(const float4* __restrict__ aos, Components out, int n) {
  __shared__ float4 tile[4][kThreads];
  for (long long first = static_cast<long long>(blockIdx.x) * kThreads; first < n;
       first += static_cast<long long>(gridDim.x) * kThreads) {
    const int count = static_cast<int>(n - first < kThreads ? n - first : kThreads);
    for (int k = threadIdx.x; k < 4 * count; k += blockDim.x) tile[k % 4][k / 4] = aos[4 * first + k];
    __syncthreads();
    if (threadIdx.x < count) {
      const long long i = first + threadIdx.x;
#pragma unroll
      for (int f = 0; f < 4; ++f) {
        const float4 v = tile[f][threadIdx.x];
        out.c[4 * f + 0][i] = v.x;
        out.c[4 * f + 1][i] = v.y;
        out.c[4 * f + 2][i] = v.z;
        out.c[4 * f + 3][i] = v.w;
      }
    }
    __syncthreads();  // the tile is refilled for the next chunk
  }
}

__global__ void from_components(Components in, float4* __restrict__ aos, int n) {
  __shared__ float4 tile[4][kThreads];
  for (long long first = static_cast<long long>(blockIdx.x) * kThreads; first < n;
       first += static_cast<long long>(gridDim.x) * kThreads) {
    const int count = static_cast<int>(n - first < kThreads ? n - first : kThreads);
    if (threadIdx.x < count) {
      const long long i = first + threadIdx.x;
#pragma unroll
      for (int f = 0; f < 4; ++f)
        tile[f][threadIdx.x] = make_float4(in.c[4 * f][i], in.c[4 * f + 1][i], in.c[4 * f + 2][i], in.c[4 * f + 3][i]);
    }
    __syncthreads();
    for (int k = threadIdx.x; k < 4 * count; k += blockDim.x) aos[4 * first + k] = tile[k % 4][k / 4];
    __syncthreads();
  }
}

__global__ void distances(Components p, int n, float4 c, float* __restrict__ dist2) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float dx = p.c[0][i] - c.x, dy = p.c[1][i] - c.y, dz = p.c[2][i] - c.z;
    dist2[i] = dx * dx + dy * dy + dz * dz;
  }
}

__global__ void step(Components p, int n, float dt) {
  using namespace particle_physics;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    // positions 0-3, velocities 4-7, colours 8-11, attributes 12-15
    const float k = kDrag / p.c[15][i];
    const float vx = p.c[4][i] + (0.0f - p.c[4][i] * k) * dt;
    const float vy = p.c[5][i] + (kGravityY - p.c[5][i] * k) * dt;
    const float vz = p.c[6][i] + (0.0f - p.c[6][i] * k) * dt;
    p.c[4][i] = vx;
    p.c[5][i] = vy;
    p.c[6][i] = vz;
    p.c[0][i] += vx * dt;
    p.c[1][i] += vy * dt;
    p.c[2][i] += vz * dt;
    const float life = p.c[12][i] - dt;
    p.c[12][i] = life;
    p.c[13][i] *= 1.0f + kGrowth * dt;
    const float fade = 1.0f - kFade * dt;
    p.c[8][i] *= fade;
    p.c[9][i] *= fade;
    p.c[10][i] *= fade;
    p.c[11][i] = fminf(p.c[11][i], fmaxf(life, 0.0f));
  }
}

}  // namespace

void particles_to_layout(const Particle* aos, float4* store, int n) {
  to_components<<<grid_for(reinterpret_cast<const void*>(to_components), n), kThreads>>>(
      reinterpret_cast<const float4*>(aos), components_of(store, n), n);
}

void particles_from_layout(const float4* store, Particle* aos, int n) {
  from_components<<<grid_for(reinterpret_cast<const void*>(from_components), n), kThreads>>>(
      components_of(const_cast<float4*>(store), n), reinterpret_cast<float4*>(aos), n);
}

void particle_distances(const float4* store, int n, float4 c, float* dist2) {
  distances<<<grid_for(reinterpret_cast<const void*>(distances), n), kThreads>>>(
      components_of(const_cast<float4*>(store), n), n, c, dist2);
}

void particle_step(float4* store, int n, float dt) {
  step<<<grid_for(reinterpret_cast<const void*>(step), n), kThreads>>>(components_of(store, n), n, dt);
}
