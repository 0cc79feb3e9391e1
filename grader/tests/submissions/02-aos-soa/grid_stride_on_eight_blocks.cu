// SoA, every access coalesced, every byte used once: the bytes are right, the grid is not. Each
// kernel is a grid-stride loop launched on 8 blocks of 256 threads whatever n is, so on a GPU 8
// of its multiprocessors do all the work and too few bytes are in flight to cover the DRAM's
// latency. Per-request counts cannot see it: the emulator's grade predicts the bandwidth from the
// bytes each thread keeps in flight (nvcc's PTX) and the grid at the GPU grade's size (8 blocks
// at n and at n / 4: a fixed grid), as lab 04's grade does.
// expect: correctness pass
// expect: lab fail
// expect[emu]: sanitizer pass
// expect[emu]: performance.positions_only_predicted fail "(bound by bytes in flight)"
// expect[emu]: performance.positions_only_predicted fail "8 block(s) here and 8 at the GPU's size"
// expect[emu]: performance.all_fields_predicted fail "(bound by bytes in flight)"
// expect[emu]: performance.conversion_predicted fail "(bound by bytes in flight)"
// needs: nvcc (the emulator's speed verdict reads the loads per trip from nvcc's PTX)
// expect[cuda]: performance.positions_only_bandwidth fail "of the copy bandwidth"
// expect[cuda]: performance.all_fields_bandwidth fail "of the copy bandwidth"
// expect[cuda]: performance.conversion_bandwidth fail "of the copy bandwidth"
#include "aos_soa.hpp"

namespace {

constexpr int kBlocks = 8;
constexpr int kThreads = 256;

__device__ long long first_index() { return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ long long stride() { return static_cast<long long>(gridDim.x) * blockDim.x; }

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
