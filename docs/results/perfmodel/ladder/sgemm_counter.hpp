// docs/results/perfmodel/ladder/sgemm_counter.hpp - what the emulator counts for one SGEMM function at
// n x n x n: one TSV row (instructions by class from common/emu/passes/count_pass.cpp, global and
// shared requests, sectors, lines and wavefronts, the launch's shape and barriers), the input of
// docs/results/perfmodel/model.py. The product is checked against a float64 product first, so a row
// never describes a kernel that went wrong. Used by perfmodel-ladder-counts (lab 06's ladder) and
// perfmodel-handin-counts (one hand-in of lab 06).
#pragma once

#include <cstddef>
#include <vector>

namespace perfmodel {

using SgemmFn = void (*)(int, int, int, float, const float*, const float*, float, float*);

/// The programs' size argument (argv[1], default 256), once the emulator is known to trace
/// accesses; 0 after printing why not (usage, or a build without tracing).
int size_argument(int argc, char** argv);

class SgemmCounter {
 public:
  explicit SgemmCounter(int n);
  ~SgemmCounter();
  SgemmCounter(const SgemmCounter&) = delete;
  SgemmCounter& operator=(const SgemmCounter&) = delete;
  /// The TSV header line (column names).
  static void print_header();
  /// Runs `run` once at n^3 and prints its row named `name`; false (and a message on stderr)
  /// when the product is wrong.
  bool row(const char* name, SgemmFn run);

 private:
  int n_;
  std::size_t elems_;
  std::vector<double> want_, bound_;
  float *da_ = nullptr, *db_ = nullptr, *dc_ = nullptr;
};

}  // namespace perfmodel
