// SoA with the easy conversions: thread i moves particle i, so on the AoS side neighbouring
// threads read (and write) 64 bytes apart. Correct. The strided reads cost nothing on an H200
// (the other fields' loads find their sectors in L1: particles_to_layout runs at 1.06 of copy),
// but the strided stores of particles_from_layout write 32 sectors in 16 lines per request, and
// the L2 takes them at 0.71 of copy (0.664 predicted).
// expect: lab fail
// expect: correctness pass
// expect[emu]: sanitizer pass
// expect[emu]: performance.conversion_predicted fail "particles_from_layout(n = 32768), measured: predicted 0.664"
// expect[emu]: performance.conversion_predicted fail "(bound by l2)"
// expect[emu]: performance.conversion_predicted fail "the hottest store writes 32 sectors per request (ideal 16)"
// expect[emu]: performance.positions_only_predicted pass
// expect[emu]: performance.all_fields_predicted pass
// expect[cuda]: performance.conversion_bandwidth fail "of the copy bandwidth"
// expect[cuda]: performance.positions_only_bandwidth pass
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
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int f = 0; f < 4; ++f) soa[f * static_cast<long long>(n) + i] = aos[4 * i + f];
}

// SoA -> AoS: the same two phases in the other direction.
__global__ void soa_to_aos_tiled(const float4* __restrict__ soa, float4* __restrict__ aos, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int f = 0; f < 4; ++f) aos[4 * i + f] = soa[f * static_cast<long long>(n) + i];
}

// Positions only: the first array, one float4 per thread, consecutive.
__global__ void distances_soa(const float4* __restrict__ position, int n, float4 c, float* __restrict__ dist2) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 q = position[i];
  const float dx = q.x - c.x, dy = q.y - c.y, dz = q.z - c.z;
  dist2[i] = dx * dx + dy * dy + dz * dz;
}

// Every field: four coalesced loads and four coalesced stores per thread.
__global__ void step_soa(float4* __restrict__ position, float4* __restrict__ velocity, float4* __restrict__ colour,
                         float4* __restrict__ attributes, int n, float dt) {
  using namespace particle_physics;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
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
