// Includes a file of the machine that is no C++ (/etc/passwd), so that the compile fails and the
// compiler's messages quote its lines: the grader's report would show the hand-in any file the
// sandbox can read (another hand-in, a rubric's hidden thresholds). The include rule reads the
// compiler's dependency list, also when the compile failed, and refuses the file before any message
// is shown; messages about files a hand-in may not read are left out in any case.
// defence: includes,compiler-output
// expect: lab fail
// expect[emu]: correctness fail "includes /etc/passwd"
// expect[emu]: absent "'root'"
// expect[cuda]: correctness fail "/etc/passwd"
// expect[cuda]: absent "root:x"
#include "/etc/passwd"
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

void row_sum(const float* m, float* sums, int n) {
  (void)m;
  (void)sums;
  (void)n;
}
