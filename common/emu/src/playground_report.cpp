// Linked into programs run with `./gpulab run FILE.cu`: when the program ends, prints the
// emulator's per-line memory metrics and the sanitizer's findings, and reports a kernel fault
// the program never synchronized on. Exit status 3 when there were findings or a fault.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "gpulab/emu/metrics.hpp"
#include "gpulab/emu/runtime.hpp"

// Defined (weakly referenced here) by the plain build of `./gpulab run --no-checks`, whose kernels
// carry no access hooks: then there are no metrics to print and the sanitizer saw no access.
extern "C" __attribute__((weak)) const int gpulab_emu_checks_off;

namespace {

void report_at_exit() {
  std::fflush(stdout);
  using namespace gpulab::emu;
  std::printf("\n== gpulab emulator report (warp size %d, %d worker%s) ==\n", warp_size(), workers(),
              workers() == 1 ? "" : "s");
  const auto lines = metrics_by_line();
  if (const char* tsv = std::getenv("GPULAB_METRICS_TSV"); tsv && *tsv) {
    if (std::FILE* f = std::fopen(tsv, "w")) {
      std::fprintf(f, "launch_id\tlaunch\tfile\tline\tspace\taccess\trequests\tunits\tideal_units\tbytes\n");
      for (const auto& m : lines)
        std::fprintf(f, "%lld\t%s\t%s\t%d\t%s\t%s\t%lld\t%lld\t%lld\t%lld\n", m.launch_id, m.launch.c_str(), m.file.c_str(), m.line,
                     m.shared ? "shared" : "global", m.atomic ? "atomic" : m.store ? "store" : "load", m.requests,
                     m.units, m.ideal_units, m.bytes_requested);
      std::fclose(f);
    }
  }
  const bool checks_off = &gpulab_emu_checks_off != nullptr;
  if (const CheckCoverage c = check_coverage(); !checks_off && c.sampled)
    std::printf("checks sampled (--checks=sample): %lld of %lld blocks checked in full (the first and last of each launch\n"
                "and two more drawn by the launch's number, the same on every run); the metrics and the whole\n"
                "sanitizer cover those blocks only: the others run as with --no-checks (an out-of-bounds access\n"
                "there may crash or pass silently). Run without --checks=sample to check every block.\n",
                c.checked_blocks, c.blocks);
  if (checks_off)
    std::printf("checks off (--no-checks): the kernels ran without access hooks, so no memory metrics and no\n"
                "memory sanitizer (an out-of-bounds access may crash or pass silently); barriers, warp\n"
                "collectives and their faults are checked as always. Run without --no-checks for the rest.\n");
  if (const CheckCoverage c = check_coverage(); (checks_off || c.sampled) && c.loop_blocks > 0)
    std::printf("block loops: %lld of %lld blocks ran as loops over their threads instead of one fiber per\n"
                "thread (kernels without warp collectives or function calls; with __syncthreads(), one loop\n"
                "per stretch between barriers), in the order the fibers run them: the same results, faster.\n"
                "A crash there names the block, not the thread.\n",
                c.loop_blocks, c.blocks);
  if (const CheckCoverage c = check_coverage(); (checks_off || c.sampled) && c.jam_blocks + c.jam_refused > 0)
    std::printf("jam copies: %lld blocks ran threads' inner loops side by side where the compiler proved it\n"
                "safe (their pointer parameters in different allocations, and an inner loop running as many\n"
                "times in every thread of the block); %lld blocks, where not, ran thread after thread.\n",
                c.jam_blocks, c.jam_refused);
  if (!checks_off) {
    if (!metrics_available()) std::printf("memory metrics: not measured (build the emu preset with clang++)\n");
    else if (lines.empty()) std::printf("memory metrics: no global or shared accesses traced\n");
    else std::printf("%s", format_metrics(lines).c_str());
  }
  if (const long long dropped = metrics_dropped_accesses())
    std::printf("(%lld accesses beyond the per-block limit are not in these numbers)\n", dropped);
  bool bad = false;
  const auto found = findings();
  if (found.empty()) {
    std::printf(checks_off ? "sanitizer: off\n" : "sanitizer: no findings\n");
  } else {
    bad = true;
    std::printf("sanitizer: %lld finding(s)\n", findings_total());
    std::size_t shown = 0;
    for (const auto& f : found) {
      if (shown++ == 10) {
        std::printf("  ... and %zu more kinds of finding\n", found.size() - 10);
        break;
      }
      std::printf("  [%s] %s\n", f.kind.c_str(), f.message.c_str());
    }
  }
  const KernelFault fault = take_pending_fault();
  if (!fault.kind.empty()) {
    bad = true;
    std::printf("kernel fault (%s), never reported by a gpulab::synchronize():\n  %s\n", fault.kind.c_str(),
                fault.message.c_str());
  }
  std::fflush(stdout);
  if (bad) _exit(3);
}

const bool registered = (std::atexit(report_at_exit), true);

}  // namespace
