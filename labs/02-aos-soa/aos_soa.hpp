// Lab 02 contract: a particle pipeline whose data layout you choose. Do not edit: the grader is
// written against this header only.
//
// The pipeline (what the grader calls, in this order):
//
//   particles_to_layout(aos, store, n)        the conversion: AoS particles -> your layout
//   particle_distances(store, n, c, dist2)    positions only: squared distance to a point
//   particle_step(store, n, dt)               every field: integrate, age, fade (in place)
//   particles_from_layout(store, aos, n)      the conversion back: your layout -> AoS
//
// The grader never looks inside `store`: it checks the pipeline's results (the distances, and the
// particles that come back through particles_from_layout), so any layout that fits in 64 bytes per
// particle is allowed: AoS (the stub), SoA, hot/cold split, ... On the emulator it measures the
// bytes used per byte moved by every call; on a GPU the positions-only call's bandwidth against a
// copy kernel and against the grader's own AoS kernel, measured in the same run.
#pragma once

// float4 and __align__: from the back-end's kernel header in kernel files and on the emulator;
// the grader's checks, compiled by the host compiler on a GPU back-end, take them from the
// vendor's runtime header.
#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__HIP__) || !(defined(GPULAB_BUILD_BACKEND_CUDA) || defined(GPULAB_BUILD_BACKEND_ROCM))
#include "gpulab/gpu.hpp"
#elif defined(GPULAB_BUILD_BACKEND_CUDA)
#include <cuda_runtime.h>
#else
#include <hip/hip_runtime.h>
#endif

/// One particle as the rest of the program stores it: 64 bytes, four 16-byte fields.
///
/// Each field is a float4, so a thread loads it with one 16-byte access (a float3 would be
/// 12 bytes and three 4-byte accesses). The struct is 16-byte aligned, so `Particle[i].field`
/// is always 16-byte aligned when the array is.
struct __align__(16) Particle {
  float4 position;    ///< x, y, z in metres; w: unused, must be preserved
  float4 velocity;    ///< x, y, z in metres per second; w: unused, must be preserved
  float4 colour;      ///< r, g, b, a in [0, 1]
  float4 attributes;  ///< x = life (seconds left), y = size, z = seed, w = mass (> 0)
};
static_assert(sizeof(Particle) == 64, "a particle is 64 bytes");
static_assert(alignof(Particle) == 16, "a particle is 16-byte aligned");

/// The constants of particle_step (the grader's reference uses the same values).
namespace particle_physics {
constexpr float kGravityY = -9.81f;  ///< m/s^2, along y
constexpr float kDrag = 0.1f;        ///< velocity loss per second, divided by the mass
constexpr float kFade = 0.5f;        ///< colour r, g, b lose kFade * dt of their value per step
constexpr float kGrowth = 0.1f;      ///< size grows by kGrowth * dt of its value per step
}  // namespace particle_physics

/// Common rules for every function below.
///
/// - `n` is the number of particles, any n >= 1 (not only multiples of a block size).
/// - `store` is a device buffer of exactly 4*n float4 (64*n bytes), 16-byte aligned (device
///   allocations are at least 256-byte aligned). Its layout is yours: the only requirement is
///   that particles_from_layout(particles_to_layout(p)) gives p back bit for bit, and that the
///   other functions read and write it consistently. Nothing outside those 64*n bytes may be
///   used: no other device memory, no host copies, no state kept between calls (the grader calls
///   each function on fresh inputs, in fresh buffers, and alone).
/// - `aos` arrays hold n particles, 16-byte aligned.
/// - Inputs are not modified; outputs may hold anything (NaN) before the call and must not be
///   read before they are written. Input and output buffers never overlap.
/// - Each function only launches kernels and returns without synchronising (the caller does).
///   The work must be done by kernels: the grader checks that kernels wrote the outputs and read
///   what the result depends on. No library algorithms (Thrust, CUB, cuBLAS, ...).

/// The conversion: writes the n particles of `aos` into `store`, in your layout.
/// Must read every byte of `aos` and write every byte of `store` that your layout uses.
void particles_to_layout(const Particle* aos, float4* store, int n);

/// The conversion back: writes the particles held in `store` (your layout) to `aos`, every
/// field of every particle, bit for bit as particles_to_layout received them (or as
/// particle_step left them).
void particles_from_layout(const float4* store, Particle* aos, int n);

/// Positions only: dist2[i] = (x_i - c.x)^2 + (y_i - c.y)^2 + (z_i - c.z)^2 for the position of
/// particle i in `store` (`c.w` is ignored). Reads the positions and nothing else: this is the
/// kernel whose speed depends on the layout.
///
/// @param store  your layout, as particles_to_layout wrote it; not modified
/// @param dist2  device array of n floats (output)
void particle_distances(const float4* store, int n, float4 c, float* dist2);

/// Every field, in place (for each particle, with the constants of particle_physics, all in float):
///
///     m = attributes.w
///     velocity.xyz  += (g - velocity.xyz * (kDrag / m)) * dt      g = (0, kGravityY, 0)
///     position.xyz  += velocity.xyz * dt                           (the updated velocity)
///     attributes.x  -= dt                                          (life)
///     attributes.y  *= 1 + kGrowth * dt                            (size)
///     colour.rgb    *= 1 - kFade * dt
///     colour.a       = min(colour.a, max(attributes.x, 0))         (the updated life)
///
/// position.w, velocity.w, attributes.z (seed) and attributes.w (mass) keep their values. The
/// grader compares with a double-precision evaluation of these lines, with a tolerance of a few
/// float roundings of the magnitudes involved, so fused multiply-adds and any association of
/// each line's terms are accepted.
///
/// @param store  your layout, read and written in place
/// @param dt     time step in seconds, 0 < dt <= 0.1
void particle_step(float4* store, int n, float dt);
