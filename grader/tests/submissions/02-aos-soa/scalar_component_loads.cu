// SoA, but particle_distances and particle_step access the fields one float at a time, as float3
// code does: each component is its own request, lanes 16 bytes apart, so every sector a request
// moves holds 4 useful bytes out of 32... then the other components come back for the same
// sectors. On the H200 those requests find the sectors in L1, and it runs as fast as float4 loads
// (0.934 of copy vs 0.936, docs/results/lab02-h200.md). The emulator counts each request on its
// own (48 load sectors per warp where float4 loads need 16), but its grade is the model's
// prediction, whose DRAM moves each granule once: 1.0 of copy, a pass on both.
// expect: lab pass
// expect: correctness pass
// expect: performance pass
#include "aos_soa.hpp"

namespace {

constexpr int kThreads = 256;
constexpr int kTile = 256;  // particles per block in the conversions (16 KiB of shared memory)

int blocks_for(long long items, int per_block) { return static_cast<int>((items + per_block - 1) / per_block); }

// AoS -> SoA. The block's kTile particles are 4*kTile consecutive float4 in `aos`: thread t
// loads float4 t, t + 256, ... (coalesced, whatever field each one is), and puts it in the tile
// at [field][particle]. After the barrier, thread t writes particle t of each field to that
// field's array (coalesced again). On the shared side, the 32 lanes of a store cover 8 particles
// x 4 fields: every bank serves 4 words, the least 512 bytes need, so no bank conflicts.
__global__ void aos_to_soa_tiled(const float4* __restrict__ aos, float4* __restrict__ soa, int n) {
  __shared__ float4 tile[4][kTile];
  const long long first = static_cast<long long>(blockIdx.x) * kTile;
  const int count = static_cast<int>(n - first < kTile ? n - first : kTile);
  const float4* src = aos + 4 * first;
  for (int k = threadIdx.x; k < 4 * count; k += blockDim.x) tile[k % 4][k / 4] = src[k];
  __syncthreads();
  for (int f = 0; f < 4; ++f)
    for (int p = threadIdx.x; p < count; p += blockDim.x) soa[f * static_cast<long long>(n) + first + p] = tile[f][p];
}

// SoA -> AoS: the same two phases in the other direction.
__global__ void soa_to_aos_tiled(const float4* __restrict__ soa, float4* __restrict__ aos, int n) {
  __shared__ float4 tile[4][kTile];
  const long long first = static_cast<long long>(blockIdx.x) * kTile;
  const int count = static_cast<int>(n - first < kTile ? n - first : kTile);
  for (int f = 0; f < 4; ++f)
    for (int p = threadIdx.x; p < count; p += blockDim.x) tile[f][p] = soa[f * static_cast<long long>(n) + first + p];
  __syncthreads();
  float4* dst = aos + 4 * first;
  for (int k = threadIdx.x; k < 4 * count; k += blockDim.x) dst[k] = tile[k % 4][k / 4];
}

// Positions only: the first array, one float4 per thread, consecutive.
__global__ void distances_soa(const float4* __restrict__ position, int n, float4 c, float* __restrict__ dist2) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float* q = reinterpret_cast<const float*>(position + i);
  const float dx = q[0] - c.x, dy = q[1] - c.y, dz = q[2] - c.z;
  dist2[i] = dx * dx + dy * dy + dz * dz;
}

// Every field: four coalesced loads and four coalesced stores per thread.
__global__ void step_soa(float4* __restrict__ position, float4* __restrict__ velocity, float4* __restrict__ colour,
                         float4* __restrict__ attributes, int n, float dt) {
  using namespace particle_physics;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 pos, vel, col, att;
  const float* ps = reinterpret_cast<const float*>(position + i);
  const float* vs = reinterpret_cast<const float*>(velocity + i);
  const float* cs = reinterpret_cast<const float*>(colour + i);
  const float* as = reinterpret_cast<const float*>(attributes + i);
  pos.x = ps[0]; pos.y = ps[1]; pos.z = ps[2]; pos.w = ps[3];
  vel.x = vs[0]; vel.y = vs[1]; vel.z = vs[2]; vel.w = vs[3];
  col.x = cs[0]; col.y = cs[1]; col.z = cs[2]; col.w = cs[3];
  att.x = as[0]; att.y = as[1]; att.z = as[2]; att.w = as[3];
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

}  // namespace

void particles_to_layout(const Particle* aos, float4* store, int n) {
  aos_to_soa_tiled<<<blocks_for(n, kTile), kThreads>>>(reinterpret_cast<const float4*>(aos), store, n);
}

void particles_from_layout(const float4* store, Particle* aos, int n) {
  soa_to_aos_tiled<<<blocks_for(n, kTile), kThreads>>>(store, reinterpret_cast<float4*>(aos), n);
}

void particle_distances(const float4* store, int n, float4 c, float* dist2) {
  distances_soa<<<blocks_for(n, kThreads), kThreads>>>(store, n, c, dist2);
}

void particle_step(float4* store, int n, float dt) {
  const long long m = n;
  step_soa<<<blocks_for(n, kThreads), kThreads>>>(store, store + m, store + 2 * m, store + 3 * m, n, dt);
}
