// labs/06-sgemm/sgemm.cu - YOUR file for lab 06: make this SGEMM fast.
//
// It starts as the simplest correct SGEMM: one thread per element of C, every operand read
// straight from global memory. It is correct for every size, and very slow. README.md (next
// to this file) explains the arithmetic and the ceilings; the TODOs below, numbered as the
// lesson's ladder, are the road from here to 75% of cuBLAS. Keep it correct at every step: run
// `./gpulab grade 06` after each change (on the emulator it checks correctness and reports
// memory-access metrics; on a GPU it also times your kernel against cuBLAS in the same run).
//
// Rules: plain FP32 arithmetic (no tensor cores, no TF32, no inline PTX); launch kernels with
// gpulab::launch; dynamic shared memory only through gpulab::dynamic_shared<T>(); never assume
// warpSize == 32 for correctness.
#include "gpulab/gpu.hpp"
#include "sgemm.hpp"

namespace {

// One thread computes one element C[row][col] with a dot product of length K.
//
// TODO(ladder step 02, coalescing): threadIdx.x picks the ROW here, so the 32 threads of a warp
//   read A from 32 different rows (K floats apart) and write C 32 rows apart: every load and store
//   of the warp touches 32 different 32-byte sectors. Let threadIdx.x pick the COLUMN instead, so
//   that a warp reads 32 consecutive floats of B and writes 32 consecutive floats of C. The
//   emulator's report shows the sectors per request drop from 32 to 4.
//
// TODO(ladder step 03, shared-memory tiling): every element of A is read N times and every
//   element of B M times from global memory. Let a block stage a BS x BS tile of A and one of B in
//   __shared__ memory (each element read from global once per tile), __syncthreads(), then compute
//   from shared memory. Guard the loads at the matrix edges (load 0 outside).
//
// TODO(ladder steps 04-05, register blocking, 1D then 2D): a thread that computes one output
//   does one shared load per FMA. Let each thread compute TM outputs of a column (1D), then a TM x
//   TN block (2D, e.g. 8 x 8): load TM values of A and TN values of B into registers once per k
//   and do TM * TN FMAs with them. Typical block tile: 128 x 128 x 8 with 256 threads.
//
// TODO(ladder step 06, float4): load global memory 16 bytes at a time (float4) when the row
//   length is a multiple of 4 and the pointers are 16-byte aligned; keep a scalar path otherwise.
//
// TODO(ladder step 07, transposed A tile): store the A tile as As[k][m] (transposed while
//   copying it to shared memory), so that the TM values of A a thread needs for one k are
//   contiguous and come in with float4 shared loads, like B's. Pad rows if the stores conflict on
//   banks. Watch the registers (nvcc -Xptxas -v): with As[m][k] the compiler holds whole rows of
//   the A tile in registers, and a kernel over 128 registers fits one 256-thread block per SM.
//
// TODO(ladder step 08, double buffering): while computing on one shared tile, load the next tile
//   from global memory into registers and store it into a second shared buffer: the global latency
//   hides behind arithmetic and one __syncthreads() per tile is enough.
//
// TODO(ladder step 09, warp tiling): give each warp a rectangle of C and split each thread's TM
//   x TN block into 4 x 4 pieces spread across the warp's rectangle, so that the lanes of a warp
//   read consecutive 16-byte words of shared memory (one wavefront, no bank conflicts) and
//   neighbouring lanes write neighbouring float4s of C.
//
// Keep an edge path (bounds-checked loads and stores) for sizes that are not tile multiples.
__global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A, const float* B,
                            float beta, float* C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  // beta == 0 means "C is an output only": reading it could turn the result into NaN.
  const int i = row * N + col;
  C[i] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[i];
}

}  // namespace

void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
           float* C) {
  const dim3 block(32, 32);
  const dim3 grid((M + block.x - 1) / block.x, (N + block.y - 1) / block.y);
  gpulab::launch(sgemm_naive, grid, block, 0, M, N, K, alpha, A, B, beta, C);
}
