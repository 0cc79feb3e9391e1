// Lab 02: AoS vs SoA. Read labs/02-aos-soa/README.md first.
//
// This version keeps the array of structures (AoS): `store` holds the n particles exactly as
// `aos` does, 64 bytes each. It is correct. Two of its four kernels are fine on a GPU: the
// conversions are plain copies, and particle_step uses every byte of each particle it loads. The
// positions-only kernel is not: neighbouring threads read positions 64 bytes apart, so each warp
// drags in whole particles to use 16 bytes of each. Grade it with `./gpulab grade 02` and look at
// the performance check of particle_distances.
#include "aos_soa.hpp"

namespace {

constexpr int kThreads = 256;

int blocks_for(long long items) { return static_cast<int>((items + kThreads - 1) / kThreads); }

// The conversions of an AoS "layout" are copies. Seen as 4*n float4, thread t copies float4 t:
// neighbouring threads touch neighbouring 16-byte pieces, whatever field they belong to.
__global__ void copy_float4(const float4* from, float4* to, long long count) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) to[i] = from[i];
}

// Thread i reads particle i's position: 16 bytes out of every 64.
__global__ void distances_aos(const Particle* p, int n, float4 c, float* dist2) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 q = p[i].position;
  const float dx = q.x - c.x, dy = q.y - c.y, dz = q.z - c.z;
  dist2[i] = dx * dx + dy * dy + dz * dz;
}

// Thread i updates all 64 bytes of particle i.
__global__ void step_aos(Particle* p, int n, float dt) {
  using namespace particle_physics;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 pos = p[i].position, vel = p[i].velocity, col = p[i].colour, att = p[i].attributes;
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
  p[i].position = pos;
  p[i].velocity = vel;
  p[i].colour = col;
  p[i].attributes = att;
}

}  // namespace

// TODO(student), in the order of the README's sections:
//   1. "The idea": pick a layout in which particle_distances reads only positions, and
//      neighbouring threads read neighbouring positions (SoA: four arrays of n float4 inside
//      `store`, one per field).
//   2. "The counter-case": rewrite particle_step for that layout; it must stay as efficient as
//      the AoS version above (every field, every byte).
//   3. "Converting AoS to SoA": rewrite both conversions. Thread-per-particle is easy but reads
//      (or writes) 64 bytes apart; stage a tile of particles in shared memory so that both the
//      global reads and the global writes are coalesced.
// Every function must be right for every n >= 1 and at warp size 32 and 64.

void particles_to_layout(const Particle* aos, float4* store, int n) {
  const long long count = 4LL * n;
  copy_float4<<<blocks_for(count), kThreads>>>(reinterpret_cast<const float4*>(aos), store, count);
}

void particles_from_layout(const float4* store, Particle* aos, int n) {
  const long long count = 4LL * n;
  copy_float4<<<blocks_for(count), kThreads>>>(store, reinterpret_cast<float4*>(aos), count);
}

void particle_distances(const float4* store, int n, float4 c, float* dist2) {
  distances_aos<<<blocks_for(n), kThreads>>>(reinterpret_cast<const Particle*>(store), n, c, dist2);
}

void particle_step(float4* store, int n, float dt) {
  step_aos<<<blocks_for(n), kThreads>>>(reinterpret_cast<Particle*>(store), n, dt);
}
