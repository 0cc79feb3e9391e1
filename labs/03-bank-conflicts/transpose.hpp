// Lab 03 contract: matrix transpose. Do not edit: the grader is written against it.
#pragma once

/// Transposes a rows x cols matrix of floats.
///
/// @param in    device pointer to rows*cols floats, row-major: element (r, c) is in[r*cols + c].
///              Not modified. Aligned as cudaMalloc aligns (at least 256 bytes).
/// @param out   device pointer to cols*rows floats, row-major: out[c*rows + r] receives
///              in[r*cols + c]. Output only: it may hold anything (NaN) before the call, and must
///              not be read. `in` and `out` do not overlap.
/// @param rows, cols  any values >= 1: not only multiples of 32 (a tile), and rows != cols.
///              (A 2-D grid of 32 x 32 tiles covers rows up to 65535 * 32; the grader stays far
///              below that.)
///
/// Launches the work on the device and returns without synchronising; the caller synchronises.
/// Only kernels may touch the data (no copies through the host, no vendor library).
void transpose(const float* in, float* out, int rows, int cols);

/// The same for doubles (the lab's second exercise: 8-byte elements in shared memory).
/// Same layout, sizes, aliasing and launch rules as transpose().
void transpose_double(const double* in, double* out, int rows, int cols);
