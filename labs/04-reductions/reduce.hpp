// Lab 04 contract: the sum of an array of floats. Do not edit: the grader is written against it.
#pragma once

/// Maximum depth of a reduction, in additions: the longest chain of floating-point additions
/// that any one element of x passes through on its way into *result (the additions of a thread's
/// sequential loop, plus the levels of the tree inside a block, plus those of the combine across
/// blocks: a chain of atomicAdd calls counts one addition per call). 2^21 allows, at the largest
/// n, one atomicAdd per 256-element block (2^20 of them) plus a tree inside the block; a single
/// thread or a single block walking the whole array exceeds it.
///
/// The grader's tolerance follows from it (labs/04-reductions/README.md, "How right is right"):
/// |result - sum| <= min(gamma_d, exp(lambda sqrt(d) u + d u^2 / (1 - u)) - 1) * sum |x_i|, with
/// d = min(n - 1, kMaxReductionDepth), u = 2^-24 and lambda = 8 (the probabilistic bound of
/// Higham and Mary, 2019, for a chain of d roundings). Integer-valued inputs whose partial sums
/// all stay below 2^24 must come out exactly, whatever the order.
inline constexpr long long kMaxReductionDepth = 1LL << 21;

/// Writes the sum of x[0], ..., x[n-1] to *result.
///
/// @param x       device pointer to n floats, 16-byte aligned (float4 loads are allowed at any
///                multiple of 4 elements). Not modified. Any finite values.
/// @param n       1 <= n <= 2^28: any value in between, not only multiples of a block or of 4.
/// @param result  device pointer to one float. Output only: it may hold anything (NaN) before
///                the call and must not be read before it is written (an atomicAdd onto it reads
///                it). `x` and `result` do not overlap.
///
/// Launches the work on the device and returns without synchronising; the caller synchronises.
/// The chain of additions must stay within kMaxReductionDepth. Only kernels may touch the data
/// (no copy through the host), and the implementation may not use CUB, hipCUB, rocPRIM or
/// Thrust (device-, block- or warp-wide): writing the reduction is the lab. The grader refuses
/// a hand-in that includes their headers.
void reduce_sum(const float* x, int n, float* result);
