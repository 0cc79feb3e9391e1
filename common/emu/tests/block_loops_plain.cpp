// The block-loop kernels compiled as plain C++ (no access tracing) with the twin pass: their
// block loops run in every block, checked or not (nothing there is traced).
#include "block_loop_kernels.hpp"

namespace {
/// Writes far outside any allocation: a crash, named by its block.
__global__ void bl_out_of_bounds(float* out) { out[(blockIdx.x * blockDim.x + threadIdx.x) * 4096u + (1u << 30)] = 1.0f; }
}  // namespace

const void* plain_affine_kernel() { return reinterpret_cast<const void*>(&bl_affine); }

void plain_affine(const float* in, float* out, int n) { gpulab::launch(bl_affine, (n + 255) / 256, 256, 0, in, out, n); }

void plain_out_of_bounds(float* out) { gpulab::launch(bl_out_of_bounds, 4, 256, 0, out); }

void plain_restrict_chain(float* buf, int n) {
  gpulab::launch(bl_restrict_chain, (n + 255) / 256, 256, 0, static_cast<const float*>(buf), buf, n);
}

void plain_racy_phases(float* out, int blocks, int rounds) { gpulab::launch(bl_racy_phases, blocks, 256, 0, out, rounds); }

void plain_kept_values(const float* in, float* out, int n, int rounds) {
  gpulab::launch(bl_kept_values, (n + 255) / 256, 256, 0, in, out, n, rounds);
}

void plain_return_before_barrier(float* out, int blocks, int quit) {
  gpulab::launch(bl_return_before_barrier, blocks, 256, 0, out, quit);
}

void plain_divergent_barriers(float* out, int blocks, int split) {
  gpulab::launch(bl_divergent_barriers, blocks, 256, 0, out, split);
}

void plain_not_alike(const float* in, float* out, int n, int split) {
  gpulab::launch(bl_not_alike, (n + 255) / 256, 256, 0, in, out, n, split);
}

const void* plain_dynamic_shared_kernel() { return reinterpret_cast<const void*>(&bl_dynamic_shared); }

void plain_dynamic_shared(float* out, int blocks) {
  gpulab::launch(bl_dynamic_shared, blocks, 128, 129 * sizeof(float), out);
}

void plain_loop_exit_kept(const float* in, float* out, int n) {
  gpulab::launch(bl_loop_exit_kept, (n + 255) / 256, 256, 0, in, out, n);
}

void plain_odd_sized_array(const float* in, float* out, int n) {
  gpulab::launch(bl_odd_sized_array, (n + 255) / 256, 256, 0, in, out, n);
}

void plain_dot(const float* a, const float* b, float* c, int n) {
  gpulab::launch(bl_dot, dim3((n + 15) / 16, (n + 15) / 16), dim3(16, 16), 0, a, b, c, n);
}

void plain_reads_neighbours(float* buf, int n, int span) {
  gpulab::launch(bl_reads_neighbours, (n + 127) / 128, 128, 0, buf, n, span);
}

void plain_pointer_table(float* const* outs, const float* in, int n, int m) {
  gpulab::launch(bl_pointer_table, (n + 127) / 128, 128, 0, outs, in, n, m);
}

void plain_in_place_after_barrier(float* buf, int blocks) {
  gpulab::launch(bl_in_place_after_barrier, blocks, 256, 0, static_cast<const float*>(buf), buf);
}

void plain_stride_sum(const float* in, float* out, int n, int blocks) {
  gpulab::launch(bl_stride_sum, blocks, 128, 0, in, out, n);
}

void plain_stride_variety(int which, const float* in, const unsigned* lens, float* out, int n, int blocks) {
  auto* kernel = which == 0 ? bl_stride_two : which == 1 ? bl_stride_bound : bl_stride_pointer;
  gpulab::launch(kernel, blocks, dim3(32, 4), 0, in, lens, out, n);
}

void plain_warp_sum(const float* in, float* out, int n, int blocks, int threads) {
  gpulab::launch(bl_warp_sum, blocks, threads, 0, in, out, n);
}

void plain_warp_mix(const float* in, float* out, int n, int threads, int width) {
  gpulab::launch(bl_warp_mix, (n + threads - 1) / threads, threads, 0, in, out, n, width);
}

void plain_warp_race(float* out, int blocks, int threads, int rounds) {
  gpulab::launch(bl_warp_race, blocks, threads, 0, out, rounds);
}

void plain_shuffle(float* out, int blocks, int threads) { gpulab::launch(bl_shuffle, blocks, threads, 0, out); }

void plain_warp_narrow_mask(float* out, int blocks) { gpulab::launch(bl_warp_narrow_mask, blocks, 64, 0, out); }

void plain_warp_faults(int which, float* out, int blocks) {
  switch (which) {
    case 0: gpulab::launch(bl_warp_literal_mask, blocks, 128, 0, out); break;
    case 1: gpulab::launch(bl_warp_two_faults, blocks, 64, 0, out); break;
    case 2: gpulab::launch(bl_warp_bad_width_no_mask, blocks, 64, 0, out); break;
    default: gpulab::launch(bl_warp_crossed_masks, blocks, 64, 0, out); break;
  }
}

void plain_order(int* tickets, int blocks, dim3 threads, int pattern, int steps) {
  gpulab::launch(bl_order, blocks, threads, 0, tickets, pattern, steps);
}
