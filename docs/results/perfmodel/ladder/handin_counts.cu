// docs/results/perfmodel/ladder/handin_counts.cu - what the emulator counts for one lab 06 hand-in: its
// sgemm() (labs/06-sgemm/sgemm.hpp) once at n x n x n, one TSV row named NAME, in the columns of
// perfmodel-ladder-counts (sgemm_counter.hpp). Built once per hand-in of
// grader/tests/submissions/06-sgemm (perfmodel-handin-NAME); docs/results/perfmodel/handins.py runs them
// and predicts each hand-in's fraction of cuBLAS on the H200.
//   perfmodel-handin-NAME [n] [NAME]
#include <cstdio>
#include <cstdlib>

#include "sgemm.hpp"
#include "sgemm_counter.hpp"

int main(int argc, char** argv) {
  const int n = perfmodel::size_argument(argc, argv);
  if (n == 0) return 2;
  const char* name = argc > 2 ? argv[2] : "handin";
  perfmodel::SgemmCounter counter(n);
  perfmodel::SgemmCounter::print_header();
  return counter.row(name, sgemm) ? 0 : 1;
}
