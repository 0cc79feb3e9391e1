// Hands in the reference solution by including it through an include directory:
// gpulab/../../../solutions/... resolves from common/include to the repository's solutions/.
// defence: includes
// expect: lab fail
// expect: correctness fail "may include only"
#include "gpulab/../../../solutions/01-coalescing/row_sum.cu"
