// cuda_pipeline.h for the emulator: the asynchronous-copy primitives (cuda_pipeline_primitives.h).
// The C++ wrapper of CUDA's header (nvcuda::experimental::pipeline) is not provided.
#pragma once

#include <cuda_pipeline_primitives.h>
