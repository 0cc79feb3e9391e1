// The vendor library's SGEMM (cuBLAS / rocBLAS), loaded at run time: the yardstick of lab 06.
#pragma once

#include <string>

namespace lab06 {

/// True when the vendor library could be loaded; otherwise `why` says what is missing.
bool vendor_available(std::string& why);
/// Its name and version, for the report ("cuBLAS 13.0.0", ...).
std::string vendor_name();
/// Row-major C = alpha * A * B + beta * C (M x K times K x N), FP32 arithmetic (no TF32), on the
/// default stream; does not synchronize.
void vendor_sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C);

}  // namespace lab06
