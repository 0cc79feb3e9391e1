// A syntax error: the lab fails with the compiler's message, naming this file.
// expect: lab fail
// expect: correctness fail "does_not_compile.cu"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

void row_sum(const float* m, float* sums, int n) { this is not C++; }
