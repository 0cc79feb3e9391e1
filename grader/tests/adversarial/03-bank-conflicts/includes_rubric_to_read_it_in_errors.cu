// Includes the lab's rubric through the contract header's directory (../../grader/labs/...), so
// that the failed compile quotes its words: the thresholds and comments of the grader's files,
// or any other file of the repository, would reach the report. The include rule reads the
// dependency list of the failed compile first and refuses the file; messages about files a
// hand-in may not read are never shown.
// defence: includes,compiler-output
// expect: lab fail
// expect[emu]: correctness fail "rubric.ini: a submission may include only"
// expect[emu]: absent "'Calibrate'"
// expect[cuda]: correctness fail "rubric.ini"
#include "../../grader/labs/03-bank-conflicts/rubric.ini"
#include "gpulab/gpu.hpp"
#include "transpose.hpp"

void transpose(const float* in, float* out, int rows, int cols) {
  (void)in, (void)out, (void)rows, (void)cols;
}

void transpose_double(const double* in, double* out, int rows, int cols) {
  (void)in, (void)out, (void)rows, (void)cols;
}
