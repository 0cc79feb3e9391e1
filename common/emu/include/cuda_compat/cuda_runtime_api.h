// <cuda_runtime_api.h> for the gpulab emulator: the same as its <cuda_runtime.h>.
#pragma once

#include "cuda_runtime.h"
