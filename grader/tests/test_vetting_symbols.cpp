// Vetting: every rule is shown broken by a tiny file compiled for the purpose (and the message
// must name the offending thing and the rule); the labs' real files, the known submissions and
// the grader's own staging must pass.
// This file: one tiny object per symbol rule, and the allow-list's reading of names.
#include "symbol_rules.hpp"
#include "vetting_test_util.hpp"

using namespace gpulab::grade;
using namespace gpulab::grade::vetting;
using namespace vetting_test;

namespace {

// ---- symbols: one tiny object per rule ----------------------------------------------------------

struct Case {
  const char* code;
  const char* symbol;  // as the message must name it
  const char* rule;
};

TEST_F(Vetting, EveryRefusedReferenceIsNamedWithItsRule) {
  const Case cases[] = {
      {"#include <dlfcn.h>\nvoid f() { dlopen(\"libcublas.so\", 2); }", "row_sum.cu:2 references dlopen", "no dynamic loading"},
      {"#include <dlfcn.h>\nvoid* f(void* h) { return dlsym(h, \"x\"); }", "dlsym", "no dynamic loading"},
      {"#define _GNU_SOURCE 1\n#include <dlfcn.h>\nvoid* f() { return dlmopen(0, \"x\", 2); }", "dlmopen", "no dynamic loading"},
      {"#include <dlfcn.h>\nvoid* f(void* h) { return dlvsym(h, \"x\", \"v\"); }", "dlvsym", "no dynamic loading"},
      {"#include <unistd.h>\nint f() { return fork(); }", "fork", "no processes or threads"},
      {"#include <cstdlib>\nint f() { return std::system(\"sh\"); }", "system", "no processes or threads"},
      {"#include <unistd.h>\nint f(char** a) { return execv(\"/bin/sh\", a); }", "execv", "no processes or threads"},
      {"#include <cstdio>\nvoid* f() { return popen(\"ls\", \"r\"); }", "popen", "no processes or threads"},
      {"#include <thread>\nvoid f() { std::thread t([] {}); t.join(); }", "std::thread", "no processes or threads"},
      {"#include <cstdio>\nvoid* f() { return std::fopen(\"/tmp/x\", \"w\"); }", "fopen", "no files or network"},
      {"#include <fcntl.h>\nint f() { return open(\"/tmp/x\", 0); }", "open", "no files or network"},
      {"#include <unistd.h>\nlong f(char* b) { return read(0, b, 1); }", "read", "no files or network"},
      {"#include <unistd.h>\nlong f() { return write(1, \"x\", 1); }", "write", "no files or network"},
      {"#include <fstream>\nvoid f() { std::ofstream(\"/tmp/x\") << 1; }", "basic_ofstream", "no files or network"},
      {"#include <filesystem>\nbool f() { return std::filesystem::exists(\"/x\"); }", "std::filesystem", "no files or network"},
      {"#include <cstdlib>\nconst char* f() { return std::getenv(\"HOME\"); }", "getenv", "no environment variables"},
      {"#include <cstdlib>\nint f() { return setenv(\"A\", \"b\", 1); }", "setenv", "no environment variables"},
      {"#include <cstdlib>\nvoid f() { std::exit(0); }", "exit", "no exit handlers or signals"},
      {"#include <unistd.h>\nvoid f() { _exit(0); }", "_exit", "no exit handlers or signals"},
      {"#include <cstdlib>\nvoid g();\nint f() { return std::atexit(g); }", "atexit", "no exit handlers or signals"},
      {"#include <csignal>\nvoid f() { std::signal(SIGALRM, SIG_IGN); }", "signal", "no exit handlers or signals"},
      {"#include <csignal>\nint f() { return std::raise(SIGKILL); }", "raise", "no exit handlers or signals"},
      {"#include <unistd.h>\nlong f() { return syscall(39); }", "syscall", "no system calls"},
      {"#include <sys/mman.h>\nint f(void* p) { return mprotect(p, 1, 7); }", "mprotect", "no system calls"},
      {"extern \"C\" int cublasSgemm_v2(void*);\nint f() { return cublasSgemm_v2(0); }", "cublasSgemm_v2", "no vendor libraries"},
      {"extern \"C\" int hipblasSgemm(void*);\nint f() { return hipblasSgemm(0); }", "hipblasSgemm", "no vendor libraries"},
      {"namespace lab06 { void vendor_sgemm(int, int, int, float, const float*, const float*, float, float*); }\n"
       "void f() { lab06::vendor_sgemm(1, 1, 1, 1, 0, 0, 0, 0); }", "lab06::vendor_sgemm", "no grader internals"},
      {"namespace gpulab::grade::lab06 { void vendor_sgemm(); }\nvoid f() { gpulab::grade::lab06::vendor_sgemm(); }",
       "gpulab::grade::lab06::vendor_sgemm()", "no grader internals"},
      {"#include \"gpulab/emu/metrics.hpp\"\nlong long f() { return gpulab::emu::findings_total(); }",
       "gpulab::emu::findings_total()", "no grader internals"},
      {"namespace gpulab::emu { void set_warp_size(int); }\nvoid f() { gpulab::emu::set_warp_size(32); }",
       "gpulab::emu::set_warp_size(int)", "no grader internals"},
      {"namespace testing { struct UnitTest { static void* GetInstance(); }; }\nvoid* f() { return testing::UnitTest::GetInstance(); }",
       "testing::UnitTest::GetInstance()", "no grader internals"},
      {"int reference_row_sum(int);\nint f() { return reference_row_sum(1); }", "reference_row_sum(int)", "no grader internals"},
      {"extern \"C\" int backtrace_open(const char*);\nint f() { return backtrace_open(\"x\"); }", "backtrace_open", "only the allowed API"},
  };
  for (const auto& c : cases)
    EXPECT_TRUE(Has(check_object_symbols({object(std::string(c.code) + "\n", "row_sum.cu", {"-I" + kSource + "/common/emu/include"})},
                                         {"row_sum"}, {}, "row_sum.cu"),
                    {std::string(c.symbol), c.rule, "which the grader does not allow", "hint: "}))
        << c.code;
}

TEST_F(Vetting, RawSystemCallInstructionsAreRefused) {
  for (const char* insn : {"syscall", "sysenter", "int $0x80"})
    EXPECT_TRUE(Has(symbols("void f() {\n  asm volatile(\"" + std::string(insn) + "\");\n}\n"),
                    {"row_sum.cu:2 uses a raw system call instruction (" + std::string(insn) + ")", "no system calls"}));
}

TEST_F(Vetting, ExitIsAcceptedOnlyAsNvccsHostBodyOfADeviceFunction) {
  // nvcc compiles `__device__ float f(float)` for the host as { volatile int v = 1; exit(v); }: it
  // can only fail the run, never end it early with success, so that shape is the one let through.
  const std::string stub = "#include <cstdlib>\nfloat block_sum(float) { volatile int v = 1; exit(v); }\n";
  EXPECT_EQ(check_object_symbols({object(stub, "row_sum.cu", {"-O2"})}, {}, {}, "row_sum.cu"), "");
  EXPECT_EQ(check_object_symbols({object(stub, "row_sum.cu", {"-O0"})}, {}, {}, "row_sum.cu"), "");
  EXPECT_TRUE(Has(symbols("#include <cstdlib>\nvoid quit(int code) {\n  volatile int v = 1;\n  exit(code + v - 1);\n}\n"),
                  {"row_sum.cu:4 references exit", "no exit handlers or signals"}));
  EXPECT_TRUE(Has(symbols(stub + "void quit() { exit(0); }\n"), {"row_sum.cu:3 references exit"}));
}

TEST_F(Vetting, DefinitionsThatOverrideTheEmulatorOrTheGraderAreRefused) {
  const std::set<std::string> emu = {"_ZN6gpulab3emu14findings_totalEv", "_ZN6gpulab3emu8findingsEv"};
  const Case cases[] = {
      {"namespace gpulab::emu { long long findings_total() { return 0; } }", "defines gpulab::emu::findings_total()",
       "no overriding the emulator or the grader"},
      {"namespace gpulab::emu { __attribute__((weak)) long long findings_total() { return 0; } }",
       "the emulator, the harness or the lab's checks define it", "no overriding"},
      {"namespace gpulab { void synchronize(const char*, int) {} }", "gpulab:: is a library's namespace", "no overriding"},
      {"namespace std { void helper() {} }", "defines std::helper()", "no overriding"},
      {"namespace testing { void helper() {} }", "defines testing::helper()", "no grader internals"},
      {"namespace gpulab::grade { int verdict = 1; }", "defines gpulab::grade::verdict", "no grader internals"},
      {"extern \"C\" long write(int, const void*, unsigned long) { return 0; }", "defines write", "C linkage"},
      {"extern \"C\" int cudaEventElapsedTime(float* ms, void*, void*) { *ms = 1; return 0; }",
       "defines cudaEventElapsedTime", "no overriding"},
      {"extern \"C\" void __sanitizer_cov_load4(void*) {}", "defines __sanitizer_cov_load4", "no overriding"},
      {"extern \"C\" void gpulab_report() {}", "defines gpulab_report", "no overriding"},
      {"int main() { return 0; }", "main belongs to the harness", "no overriding"},
      {"#include <new>\n#include <cstdlib>\nvoid* operator new(std::size_t n) { return std::malloc(n); }",
       "defines operator new(unsigned long)", "no overriding"},
      {"int warpSize = 32;", "defines warpSize", "no overriding"},
      {"namespace cutlass { void gemm() {} }", "defines cutlass::gemm()", "no vendor libraries"},
  };
  for (const auto& c : cases)
    EXPECT_TRUE(Has(symbols(std::string(c.code) + "\n", emu), {std::string(c.symbol), c.rule})) << c.code;
}

// extern "C" kernels and helpers of the submission's own take the place of nothing: allowed. A
// C-linkage name a linked library uses (defined or referenced), the implementation's names (a
// leading underscore) and the GPU runtimes' prefixes are refused.
TEST_F(Vetting, CLinkageDefinitionsOfTheSubmissionsOwnNamesPass) {
  EXPECT_EQ(symbols("extern \"C\" void coalescing_row_sum(const float* m, float* s, int n) { s[0] = m[n]; }\n"
                    "extern \"C\" { float lab_helper(float x) { return 2 * x; } }\n"),
            "");
  const std::set<std::string> libraries = {"memcpy", "gpulab_emu_register_twin", "some_library_hook"};
  const Case refused[] = {
      {"extern \"C\" void some_library_hook() {}", "a library the lab is linked with", "no overriding"},
      {"extern \"C\" void _start_here() {}", "defines _start_here", "C linkage"},
      {"extern \"C\" int cuInitialise() { return 0; }", "defines cuInitialise", "no overriding"},
      {"extern \"C\" int cudaLaunchHelper() { return 0; }", "defines cudaLaunchHelper", "no overriding"},
      {"extern \"C\" int nvtxRangePushA(const char*) { return 0; }", "defines nvtxRangePushA", "no overriding"},
      {"extern \"C\" int hipInit(unsigned) { return 0; }", "defines hipInit", "no overriding"},
      {"extern \"C\" void* malloc(unsigned long) { return 0; }", "defines malloc", "no overriding"},
  };
  for (const auto& c : refused)
    EXPECT_TRUE(Has(symbols(std::string(c.code) + "\n", libraries), {std::string(c.symbol), c.rule})) << c.code;
}

// The C library's names, read from the library itself, include what a submission could replace.
TEST(SymbolRules, LibraryCNamesComeFromTheLibrariesSymbolTables) {
  const std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  if (!std::filesystem::exists(libc)) GTEST_SKIP() << "no " << libc;
  const std::set<std::string> names = library_c_names({libc});
  for (const char* n : {"malloc", "memcpy", "write", "qsort", "pthread_create"}) EXPECT_TRUE(names.count(n)) << n;
  for (const auto& n : names) EXPECT_NE(n.rfind("_Z", 0), 0u) << n;
}

TEST_F(Vetting, OrdinaryCppPasses) {
  EXPECT_EQ(symbols(R"(#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>
int calls = 0;                                   // a global of the student's: not mangled, fine
namespace mine { float twice(float x) { return 2 * x; } }
namespace { std::mutex m; }
struct Base { virtual ~Base() = default; virtual float f(float) = 0; };
struct Impl : Base { float f(float x) override { return std::sqrt(x) + std::exp(x) + sinf(x) + std::pow(x, 3.f); } };
void row_sum(const float* m, float* sums, int n) {
  static std::map<int, std::vector<float>> cache;  // guard variables, static destructors
  std::lock_guard<std::mutex> lock(::m);
  std::unique_ptr<Base> b(new Impl);
  auto* p = static_cast<float*>(std::malloc(4)); std::memcpy(p, m, 4); std::free(p);
  if (n < 0) throw std::runtime_error("n = " + std::to_string(n));
  cache[n].assign(sums, sums + n);
  std::printf("%f\n", b->f(mine::twice(m[0]))); std::fprintf(stderr, "x\n"); std::cout << calls++ << std::endl;
  if (!dynamic_cast<Impl*>(b.get())) std::abort();
})"),
            "");
}

TEST_F(Vetting, TheStandardLibrarysRuntimeHelpersPass) {
  // std::call_once (__once_proxy), 16-byte atomics (__atomic_load), complex and 128-bit arithmetic
  // (__mulsc3, __divti3), random numbers, sleeping, condition variables.
  EXPECT_EQ(symbols(R"(#include <atomic>
#include <chrono>
#include <complex>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>
#include <unordered_map>
struct Big { long a, b; };
std::atomic<Big> big;
std::once_flag once;
std::condition_variable cv;
std::mutex mu;
float f(float x, int n) {
  std::call_once(once, [] { std::puts("once"); });
  Big b = big.load(); b.a++; big.store(b);
  std::mt19937 rng(42); std::uniform_real_distribution<float> d(0, 1);
  std::complex<float> c(x, 2 * x); c = c * c / std::complex<float>(1.f, x);
  std::unordered_map<int, float> m; m[n] = d(rng);
  std::function<float(float)> g = [&](float y) { return y + m[n]; };
  std::this_thread::sleep_for(std::chrono::microseconds(1));
  { std::unique_lock<std::mutex> l(mu); cv.wait_for(l, std::chrono::microseconds(1)); }
  __int128 q = static_cast<__int128>(n) * n; q /= n + 1;
  std::ostringstream os; os << c.real();
  return g(static_cast<float>(q)) + static_cast<float>(os.str().size());
})"),
            "");
}

TEST_F(Vetting, FunctionsOfTheSubmissionsOtherObjectsMayBeCalled) {
  const std::string a = object("namespace mine { int helper(int); }\nint use() { return mine::helper(1); }\n", "a.cpp");
  const std::string b = object("namespace mine { int helper(int x) { return x; } }\n", "b.cpp");
  EXPECT_EQ(check_object_symbols({a, b}, {"row_sum"}, {}, "row_sum.cu"), "");
  EXPECT_TRUE(Has(check_object_symbols({a}, {"row_sum"}, {}, "row_sum.cu"), {"mine::helper(int)", "only the allowed API"}));
  EXPECT_TRUE(Has(check_object_symbols({(dir_ / "none.o").string()}, {}, {}, "row_sum.cu"), {"cannot check"}));
}

// ---- the allow-list's reading of names -----------------------------------------------------------

TEST(SymbolRules, ScopesOfMangledNames) {
  using V = std::vector<std::string>;
  EXPECT_EQ(rules::scope_of("_ZN6gpulab3emu10sync_blockENS0_9BarrierOpEiPKci"), (V{"gpulab", "emu", "sync_block"}));
  EXPECT_EQ(rules::scope_of("_ZZ7row_sumPKfPfiE5cache"), V{"row_sum"});
  EXPECT_EQ(rules::scope_of("_ZGVZN12_GLOBAL__N_115multiprocessorsEvE5count"), (V{"_GLOBAL__N_1", "multiprocessors"}));
  EXPECT_EQ(rules::scope_of("_ZNKSt6vectorIfSaIfEE4sizeEv"), (V{"std", "vector"}));
  EXPECT_EQ(rules::scope_of("_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc")[0], "std");
  EXPECT_EQ(rules::scope_of("_ZNSolsEf"), (V{"std", "ostream", "operator ls"}));
  EXPECT_EQ(rules::scope_of("_ZTVN10__cxxabiv117__class_type_infoE"), (V{"__cxxabiv1", "__class_type_info"}));
  EXPECT_EQ(rules::scope_of("_Znwm"), V{"operator nw"});
  EXPECT_EQ(rules::scope_of("_ZThn8_N3Foo3barEv"), (V{"Foo", "bar"}));
  EXPECT_EQ(rules::scope_of("_ZTWN6gpulab3emu8builtinsE"), (V{"gpulab", "emu", "builtins"}));
  EXPECT_EQ(rules::scope_of("_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEED1Ev"), (V{"std", "__cxx11", "basic_string"}));
  EXPECT_TRUE(rules::scope_of("write").empty());
}

TEST(SymbolRules, RefusalsWinOverBroaderAllowances) {
  using rules::Rule;
  EXPECT_EQ(rules::classify_reference("cudaMalloc"), Rule::allowed);
  EXPECT_EQ(rules::classify_reference("cudaGetDriverEntryPoint"), Rule::dynamic_loading);
  EXPECT_EQ(rules::classify_reference("hipMalloc"), Rule::allowed);
  EXPECT_EQ(rules::classify_reference("hipblasSgemm"), Rule::vendor_libraries);
  // Memory kernels and host code both reach: refused before the cuda*/hip* allowances.
  EXPECT_EQ(rules::classify_reference("cudaMallocHost"), Rule::shared_host_memory);
  EXPECT_EQ(rules::classify_reference("cudaHostAlloc"), Rule::shared_host_memory);
  EXPECT_EQ(rules::classify_reference("cudaMallocManaged"), Rule::shared_host_memory);
  EXPECT_EQ(rules::classify_reference("cudaMemAdvise_v2"), Rule::shared_host_memory);
  EXPECT_EQ(rules::classify_reference("hipHostMalloc"), Rule::shared_host_memory);
  EXPECT_EQ(rules::classify_reference("__cxa_atexit"), Rule::allowed);
  EXPECT_EQ(rules::classify_reference("__cxa_at_quick_exit"), Rule::exit_and_signals);
  EXPECT_EQ(rules::classify_reference("__expf_finite"), Rule::allowed);
  EXPECT_EQ(rules::classify_reference("_ZGVbN4v_sinf"), Rule::allowed);
  EXPECT_EQ(rules::classify_reference("_ZN6gpulab3emu6detail9on_accessEPKvmbPKci"), Rule::grader_internals);
  EXPECT_EQ(rules::classify_reference("_ZSt3cin"), Rule::files);
  EXPECT_EQ(rules::classify_reference("__libc_start_main"), Rule::system_calls);
  EXPECT_EQ(rules::classify_reference("cuModuleLoadData"), Rule::dynamic_loading);
}

TEST(SymbolRules, L2PersistenceControlsAreRefused) {
  // A persisting access-policy window or L2 set-aside would keep a kernel's inputs in the L2
  // across the flush before every timed run; the per-thread stream variants too.
  using rules::Rule;
  for (const char* name : {"cudaStreamSetAttribute", "cudaStreamSetAttribute_ptsz", "cudaDeviceSetLimit",
                           "cudaCtxResetPersistingL2Cache", "cudaGraphKernelNodeSetAttribute", "cuStreamSetAttribute",
                           "cuCtxSetLimit", "hipStreamSetAttribute", "hipDeviceSetLimit"})
    EXPECT_EQ(rules::classify_reference(name), Rule::cache_controls) << name;
  EXPECT_EQ(rules::classify_reference("cudaStreamCreateWithFlags"), Rule::allowed);
  EXPECT_EQ(rules::classify_reference("cudaStreamGetAttribute"), Rule::allowed);
  EXPECT_STREQ(rules::rule_name(Rule::cache_controls), "no cache controls");
}

}  // namespace
