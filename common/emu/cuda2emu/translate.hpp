// cuda2emu/translate.hpp - rewrites the `<<<...>>>` kernel launches of a CUDA source into calls
// the emulator back-end compiles as plain C++:
//
//   callee<<<grid, block[, shared[, stream]]>>>(args...)
//     -> ::gpulab::emu::cuda_launch(GPULAB_KERNEL_OF(callee), ::gpulab::emu::launch_config(
//            __FILE__, __LINE__, grid, block[, shared[, stream]]))(args...)
//
// and `extern __shared__ T name[];` (dynamic shared memory) into a pointer to the block's dynamic
// shared memory (see translate.cpp). Everything else is copied byte for byte, and no line is added or removed inside the file, so
// every line keeps its number; one include and a `#line 1 "<file>"` go before the first line.
#pragma once

#include <string>
#include <vector>

namespace gpulab::cuda2emu {

struct Translation {
  std::string text;                 ///< the translated file (valid only when errors is empty)
  int launches = 0;                 ///< how many `<<<>>>` launches were rewritten
  int shared_arrays = 0;            ///< how many `extern __shared__` arrays were rewritten
  std::vector<std::string> errors;  ///< "file:line: message", one per launch it cannot rewrite
};

/// Translates `text`, the contents of `path` (the name the output's #line directive and the
/// messages give). Only the file's own text is read: includes are not followed, macros not expanded.
Translation translate(const std::string& path, const std::string& text);

}  // namespace gpulab::cuda2emu
