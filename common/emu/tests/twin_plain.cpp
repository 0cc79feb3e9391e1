// The twin kernels, compiled as plain C++: no access tracing.
#include "twin_kernels.hpp"
GPULAB_DEFINE_TWINS(plain_kernels)
