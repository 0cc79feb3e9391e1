// SoA, every access coalesced, every byte used once, each kernel a grid-stride loop on 8 blocks
// whatever n is (submissions/02-aos-soa/grid_stride_on_eight_blocks.cu): on a GPU too few bytes are
// in flight, and the emulator's grade, which reads the bytes per loop trip from nvcc's PTX, fails
// it. Here the loop's stride goes through std::max, a constexpr host function, which clang runs in
// a kernel and nvcc refuses (a GPU build too): without nvcc's PTX the bytes in flight used to be
// "not predicted" and only the roofline, which passes the kernels, was graded. A prediction the
// hand-in denies fails.
// And the emulator's grade now fails a file that nvcc, here, refuses (a GPU build would), before it
// runs (gpu-compiler); without that, the prediction the hand-in denies fails (prediction-required).
// defence: prediction-required,gpu-compiler
// defence[cuda]: none (on a GPU nvcc's compile is the program: nvcc itself refuses the file)
// needs: nvcc
// expect[emu]: lab fail
// expect[emu]: correctness fail "does not compile for a GPU"
// expect[cuda]: correctness fail "does not compile"
#include <algorithm>

#include "aos_soa.hpp"

namespace {

constexpr int kBlocks = 8;
constexpr int kThreads = 256;

__device__ long long first_index() { return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ long long stride() { return std::max(static_cast<long long>(gridDim.x) * blockDim.x, 1LL); }

// AoS -> SoA: particle i's four fields to the four arrays (the reads 64 bytes apart, the writes
// consecutive).
__global__ void to_soa(const float4* __restrict__ aos, float4* __restrict__ soa, int n) {
  for (long long i = first_index(); i < n; i += stride())
    for (int f = 0; f < 4; ++f) soa[f * static_cast<long long>(n) + i] = aos[4 * i + f];
}

// SoA -> AoS: float4 k of the AoS is field k % 4 of particle k / 4 (the writes consecutive).
__global__ void to_aos(const float4* __restrict__ soa, float4* __restrict__ aos, int n) {
  for (long long k = first_index(); k < 4LL * n; k += stride()) aos[k] = soa[(k % 4) * n + k / 4];
}

__global__ void distances(const float4* __restrict__ position, int n, float4 c, float* __restrict__ dist2) {
  for (long long i = first_index(); i < n; i += stride()) {
    const float4 q = position[i];
    const float dx = q.x - c.x, dy = q.y - c.y, dz = q.z - c.z;
    dist2[i] = dx * dx + dy * dy + dz * dz;
  }
}

__global__ void step(float4* __restrict__ position, float4* __restrict__ velocity, float4* __restrict__ colour,
                     float4* __restrict__ attributes, int n, float dt) {
  using namespace particle_physics;
  for (long long i = first_index(); i < n; i += stride()) {
    float4 pos = position[i], vel = velocity[i], col = colour[i], att = attributes[i];
    const float k = kDrag / att.w;
    vel.x += (0.0f - vel.x * k) * dt;
    vel.y += (kGravityY - vel.y * k) * dt;
    vel.z += (0.0f - vel.z * k) * dt;
    pos.x += vel.x * dt;
    pos.y += vel.y * dt;
    pos.z += vel.z * dt;
    att.x -= dt;
    att.y *= 1.0f + kGrowth * dt;
    const float fade = 1.0f - kFade * dt;
    col.x *= fade;
    col.y *= fade;
    col.z *= fade;
    col.w = fminf(col.w, fmaxf(att.x, 0.0f));
    position[i] = pos;
    velocity[i] = vel;
    colour[i] = col;
    attributes[i] = att;
  }
}

}  // namespace

void particles_to_layout(const Particle* aos, float4* store, int n) {
  to_soa<<<kBlocks, kThreads>>>(reinterpret_cast<const float4*>(aos), store, n);
}

void particles_from_layout(const float4* store, Particle* aos, int n) {
  to_aos<<<kBlocks, kThreads>>>(store, reinterpret_cast<float4*>(aos), n);
}

void particle_distances(const float4* store, int n, float4 c, float* dist2) {
  distances<<<kBlocks, kThreads>>>(store, n, c, dist2);
}

void particle_step(float4* store, int n, float dt) {
  const long long m = n;
  step<<<kBlocks, kThreads>>>(store, store + m, store + 2 * m, store + 3 * m, n, dt);
}
