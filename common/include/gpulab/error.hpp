// gpulab/error.hpp - the exception every gpulab host helper throws, and the check macro.
#pragma once

#include <stdexcept>
#include <string>

namespace gpulab {

/// A failed GPU (or emulator) operation. what() reads
///   "file.cu:42: cudaMemcpy failed: invalid argument (hint: ...)"
class Error : public std::runtime_error {
 public:
  Error(const std::string& where, const std::string& what, const std::string& hint = {})
      : std::runtime_error(compose(where, what, hint)) {}

  static std::string location(const char* file, int line) {
    return std::string(file ? file : "?") + ":" + std::to_string(line);
  }

 private:
  static std::string compose(const std::string& where, const std::string& what,
                             const std::string& hint) {
    std::string s = where.empty() ? what : where + ": " + what;
    if (!hint.empty()) s += "\n  hint: " + hint;
    return s;
  }
};

/// Throws gpulab::Error naming file:line when `status` is a CUDA/HIP error; used by GPULAB_CHECK.
void check_status(int status, const char* expr, const char* file, int line);

}  // namespace gpulab

/// Wrap a raw runtime call: GPULAB_CHECK(cudaMemset(p, 0, n)). Throws gpulab::Error with the
/// file, line, the call's text and the runtime's explanation.
#define GPULAB_CHECK(expr) ::gpulab::check_status(static_cast<int>(expr), #expr, __FILE__, __LINE__)
