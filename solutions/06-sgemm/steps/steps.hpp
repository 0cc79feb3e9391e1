// solutions/06-sgemm/steps/steps.hpp - the optimisation ladder of lab 06, one step per file.
//
// Every step implements the contract of labs/06-sgemm/sgemm.hpp (row-major, device pointers,
// any M, N, K >= 1, beta == 0 does not read C, launches only) under its own name, so that the
// benchmark (bench/sgemm_ladder.cu) and the correctness test (tests/sgemm_steps_test.cu) can
// run them side by side. Steps 04-09 compute only whole 128 x 128 x 8 tiles (64 x 64 x 8 for
// step 04) on their fast path; for any other size they call step 03, which handles edges.
#pragma once

void sgemm_step01_naive(int M, int N, int K, float alpha, const float* A, const float* B,
                        float beta, float* C);
void sgemm_step02_coalesced(int M, int N, int K, float alpha, const float* A, const float* B,
                            float beta, float* C);
void sgemm_step03_smem_tiling(int M, int N, int K, float alpha, const float* A, const float* B,
                              float beta, float* C);
void sgemm_step04_register_1d(int M, int N, int K, float alpha, const float* A, const float* B,
                              float beta, float* C);
void sgemm_step05_register_2d(int M, int N, int K, float alpha, const float* A, const float* B,
                              float beta, float* C);
void sgemm_step06_float4_loads(int M, int N, int K, float alpha, const float* A,
                               const float* B, float beta, float* C);
void sgemm_step07_transposed_a(int M, int N, int K, float alpha, const float* A,
                               const float* B, float beta, float* C);
void sgemm_step08_double_buffer(int M, int N, int K, float alpha, const float* A,
                                const float* B, float beta, float* C);
void sgemm_step09_warp_tiling(int M, int N, int K, float alpha, const float* A, const float* B,
                              float beta, float* C);
void sgemm_step10_final(int M, int N, int K, float alpha, const float* A, const float* B,
                        float beta, float* C);

namespace sgemm_steps {

using SgemmFn = void (*)(int, int, int, float, const float*, const float*, float, float*);

struct Step {
  const char* name;  ///< short label for tables
  SgemmFn run;
};

/// The ladder in order; the benchmark prints one row per entry.
inline const Step kLadder[] = {
    {"01 naive", sgemm_step01_naive},
    {"02 coalesced", sgemm_step02_coalesced},
    {"03 smem tiling", sgemm_step03_smem_tiling},
    {"04 1D register blocking", sgemm_step04_register_1d},
    {"05 2D register blocking", sgemm_step05_register_2d},
    {"06 float4 loads", sgemm_step06_float4_loads},
    {"07 transposed A tile", sgemm_step07_transposed_a},
    {"08 double buffering", sgemm_step08_double_buffer},
    {"09 warp tiling", sgemm_step09_warp_tiling},
    {"10 final (reference)", sgemm_step10_final},
};

/// True when the float4 fast paths may be used: 16-byte aligned pointers (rows of K and N
/// floats stay aligned because the callers also require K % 4 == 0 and N % 4 == 0).
inline bool aligned16(const void* p) {
  return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

}  // namespace sgemm_steps
