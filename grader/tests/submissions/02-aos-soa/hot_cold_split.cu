// Hot/cold split: position and velocity side by side (32 bytes per particle), colour and
// attributes in a second array. The conversions stay coalesced (a float4 copy that routes each
// piece to its array) and particle_step uses every byte, but the positions-only kernel reads
// 16 bytes out of every 32: the split suits kernels that touch position and velocity together,
// not this one. Launched with gpulab::launch (both spellings are graded alike).
// expect: lab fail
// expect: correctness pass
// expect[emu]: sanitizer pass
// expect[emu]: performance fail "particle_distances(n = 32768), measured"
// expect[emu]: performance fail "32 sectors per request (ideal 16)"
// expect[emu]: performance fail "32 bytes apart"
// expect[emu]: performance.all_fields_predicted pass
// expect[emu]: performance.conversion_predicted pass
#include "aos_soa.hpp"

namespace {

constexpr int kThreads = 256;
int blocks_for(long long items) { return static_cast<int>((items + kThreads - 1) / kThreads); }

// store[0 .. 2n): hot pairs (position_i, velocity_i); store[2n .. 4n): cold pairs (colour_i, attributes_i).
// Float4 k of the AoS is field k % 4 of particle k / 4; it goes to pair slot k % 2 of the hot
// (fields 0, 1) or cold (fields 2, 3) array. 32 lanes = 8 particles = 256 contiguous bytes of each.
__device__ long long slot(long long k, long long n) {
  const long long p = k / 4, f = k % 4;
  return (f < 2 ? 0 : 2 * n) + 2 * p + f % 2;
}

__global__ void to_hot_cold(const float4* aos, float4* store, long long n) {
  const long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < 4 * n) store[slot(k, n)] = aos[k];
}

__global__ void from_hot_cold(const float4* store, float4* aos, long long n) {
  const long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < 4 * n) aos[k] = store[slot(k, n)];
}

__global__ void distances_hot(const float4* hot, int n, float4 c, float* dist2) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 q = hot[2LL * i];
  const float dx = q.x - c.x, dy = q.y - c.y, dz = q.z - c.z;
  dist2[i] = dx * dx + dy * dy + dz * dz;
}

__global__ void step_hot_cold(float4* hot, float4* cold, int n, float dt) {
  using namespace particle_physics;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 pos = hot[2LL * i], vel = hot[2LL * i + 1], col = cold[2LL * i], att = cold[2LL * i + 1];
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
  hot[2LL * i] = pos;
  hot[2LL * i + 1] = vel;
  cold[2LL * i] = col;
  cold[2LL * i + 1] = att;
}

}  // namespace

void particles_to_layout(const Particle* aos, float4* store, int n) {
  gpulab::launch(to_hot_cold, blocks_for(4LL * n), kThreads, 0, reinterpret_cast<const float4*>(aos), store,
                 static_cast<long long>(n));
}

void particles_from_layout(const float4* store, Particle* aos, int n) {
  gpulab::launch(from_hot_cold, blocks_for(4LL * n), kThreads, 0, store, reinterpret_cast<float4*>(aos),
                 static_cast<long long>(n));
}

void particle_distances(const float4* store, int n, float4 c, float* dist2) {
  gpulab::launch(distances_hot, blocks_for(n), kThreads, 0, store, n, c, dist2);
}

void particle_step(float4* store, int n, float dt) {
  gpulab::launch(step_hot_cold, blocks_for(n), kThreads, 0, store, store + 2LL * n, n, dt);
}
