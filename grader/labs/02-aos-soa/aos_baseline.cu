// Lab 02: the grader's AoS positions-only kernel, timed in the same run as the submission's
// particle_distances so that the report can say how far the submission is from plain AoS.
// Trusted code: it is part of the checks, not of the code under test.
#include "aos_soa.hpp"

namespace {

__global__ void lab02_distances_aos(const Particle* __restrict__ p, int n, float4 c, float* __restrict__ dist2) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 q = p[i].position;
  const float dx = q.x - c.x, dy = q.y - c.y, dz = q.z - c.z;
  dist2[i] = dx * dx + dy * dy + dz * dz;
}

}  // namespace

void lab02_aos_baseline_distances(const Particle* aos, int n, float4 c, float* dist2) {
  gpulab::launch(lab02_distances_aos, (n + 255) / 256, 256, 0, aos, n, c, dist2);
}
