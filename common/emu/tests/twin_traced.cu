// The twin kernels, compiled as a kernel file: with access tracing.
#include "twin_kernels.hpp"
GPULAB_DEFINE_TWINS(traced_kernels)
