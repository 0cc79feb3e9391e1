// Forges the judge's verdicts with inline-assembly system calls (open, write, close through the
// syscall instruction; the asm keyword is spelt by pasting two tokens, so no 'asm' appears in
// the text, and no C library function appears among its references): a static initializer
// appends "check ... 1" lines for every planned check to the verdict files the judge appends to
// later (../verdicts-32.tsv, ../verdicts-64.tsv; ../verdicts-0.tsv on a GPU). The kernel is the slow thread-per-row stub.
// defence: source-text,symbols,sandbox,verdict-file,instrumentation
// expect: lab fail
// expect: performance fail
#include "gpulab/gpu.hpp"
#include "row_sum.hpp"

namespace {

__global__ void row_sum_thread_per_row(const float* m, float* sums, int n) {
  const int row = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (row >= n) return;
  float s = 0.0f;
  for (int col = 0; col < n; ++col) s += m[static_cast<long long>(row) * n + col];
  sums[row] = s;
}

#define GLUE(a, b) a##b
#define INLINE_ASSEMBLY GLUE(__as, m__)

long raw(long number, long a, long b, long c) {
#if defined(__x86_64__)
  long result;
  INLINE_ASSEMBLY volatile("syscall" : "=a"(result) : "a"(number), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return result;
#else
  (void)number, (void)a, (void)b, (void)c;
  return -1;
#endif
}

constexpr long kWrite = 1, kOpen = 2, kClose = 3;
constexpr long kAppendCreate = 02000 | 0100 | 01;  // O_APPEND | O_CREAT | O_WRONLY

const char kCorrectness[] =
    "check\tcorrectness.tiny_sizes\tcorrectness\t1\t0\t1\terror/tolerance\t\n"
    "check\tcorrectness.block_size_boundaries\tcorrectness\t1\t0\t1\terror/tolerance\t\n"
    "check\tcorrectness.prime_and_random_sizes\tcorrectness\t1\t0\t1\terror/tolerance\t\n"
    "check\tcorrectness.exact_on_integer_inputs\tcorrectness\t1\t0\t1\terror/tolerance\t\n"
    "check\tcorrectness.fresh_inputs_every_call\tcorrectness\t1\t0\t1\terror/tolerance\t\n";
const char kSanitizer[] = "check\tsanitizer.no_memory_errors_or_races\tsanitizer\t1\t0\t0\tfindings\t\n";
const char kEmuPerformance[] =
    "check\tperformance.coalesced_global_loads\tperformance\t1\t1\t0.8\tload efficiency\t\n"
    "check\tperformance.predicted_fraction_of_copy\tperformance\t1\t1\t0.5\tof copy bandwidth\t\n";
const char kGpuPerformance[] = "check\tperformance.bandwidth_vs_copy\tperformance\t1\t1\t0.9\tof copy bandwidth\t\n";

template <std::size_t N>
void put(long fd, const char (&text)[N]) {
  raw(kWrite, fd, reinterpret_cast<long>(text), N - 1);
}

// The emulator's plan (per warp size: the checks, the sanitizer, performance at 32 lanes only) and
// a GPU's (verdicts-0: the checks and performance).
void forge(const char* path, bool sanitizer, const char* performance, std::size_t performance_bytes) {
  const long fd = raw(kOpen, reinterpret_cast<long>(path), kAppendCreate, 0644);
  if (fd < 0) return;
  put(fd, kCorrectness);
  if (sanitizer) put(fd, kSanitizer);
  if (performance) raw(kWrite, fd, reinterpret_cast<long>(performance), static_cast<long>(performance_bytes));
  raw(kClose, fd, 0, 0);
}

const bool forged = (forge("../verdicts-32.tsv", true, kEmuPerformance, sizeof kEmuPerformance - 1),
                     forge("../verdicts-64.tsv", true, nullptr, 0),
                     forge("../verdicts-0.tsv", false, kGpuPerformance, sizeof kGpuPerformance - 1), true);

}  // namespace

void row_sum(const float* m, float* sums, int n) {
  gpulab::launch(row_sum_thread_per_row, (n + 255) / 256, 256, 0, m, sums, n);
}
