// The source-text rules (grader/src/source_rules.cpp): each rule on a small text, the ways a word
// can hide from a reader that is not the compiler's lexer (splices, raw strings, digit
// separators, digraphs), and every kernel file of the repository that a hand-in could be.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "source_rules.hpp"

namespace {

namespace fs = std::filesystem;
using gpulab::grade::source_rules::check_preprocessed;
using gpulab::grade::source_rules::check_source;

std::string check(const std::string& text) { return check_source(text, "k.cu"); }

TEST(GraderSourceRules, OrdinaryKernelPasses) {
  EXPECT_EQ(check("#include \"gpulab/gpu.hpp\"\n#define TILE 32\n#if TILE > 16\nconstexpr int kTile = TILE;\n#endif\n"
                  "__global__ void __launch_bounds__(256) k(const float* __restrict__ x, float* y) {\n"
                  "  __shared__ float s[TILE];\n  s[threadIdx.x] = __ldg(x);\n  __syncthreads();\n"
                  "  y[0] = __shfl_down_sync(0xffffffffu, s[0], 1) + __fdividef(1.f, 2.f);\n"
                  "  printf(\"%s:%d\\n\", __FILE__, __LINE__);\n}\n"),
            "");
}

TEST(GraderSourceRules, CompilerMacrosAreRefusedAnywhere) {
  for (const char* w : {"__CUDACC__", "__NVCC__", "__CUDA_ARCH__", "__CUDACC_VER_MAJOR__", "__clang__", "__clang_major__",
                        "__GNUC__", "__GNUG__", "__llvm__", "__HIPCC__", "__HIP_DEVICE_COMPILE__", "__NVCOMPILER",
                        "__INTEL_COMPILER", "_MSC_VER", "__has_include", "__has_builtin", "__is_identifier",
                        "CUDART_VERSION", "CUDA_VERSION", "HIP_VERSION_MAJOR", "NV_IF_TARGET", "GPULAB_BACKEND_EMU",
                        "GPULAB_BUILD_BACKEND_EMU", "__cplusplus"}) {
    const std::string m = check(std::string("int f() { return ") + w + "; }\n");
    EXPECT_NE(m.find("k.cu:1: uses '" + std::string(w) + "'"), std::string::npos) << w << ": " << m;
    EXPECT_NE(m.find("one program for every compiler"), std::string::npos) << m;
  }
  EXPECT_EQ(check("void f() { GPULAB_CHECK(cudaDeviceSynchronize()); }\n"), "");
}

TEST(GraderSourceRules, ConditionalsTestOnlyTheFilesOwnMacros) {
  const std::string head = "#include <cstdio>\n";
  EXPECT_EQ(check(head + "#define FAST 1\n#if FAST\nint x;\n#elif defined(FAST) && !FAST\n#endif\n#ifdef FAST\n#endif\n"), "");
  EXPECT_EQ(check(head + "#define A 2\n#define B (A * 4)\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\n#if MAX(A, B) > 4\n#endif\n"),
            "");
  EXPECT_EQ(check("#if 0\nnot compiled\n#endif\n"), "");
  // Not the file's own: the build's flags, a header's, or defined where the definition may not run.
  for (const std::string& text : std::vector<std::string>
       {head + "#ifdef NDEBUG\n#endif\n", head + "#if defined(SOME_HEADER_MACRO)\n#endif\n",
        head + "#ifndef X\n#define X 1\n#endif\n#if X\n#endif\n",  // only inside a block
        std::string("#define X 1\n#include <cstdio>\n#if X\n#endif\n"),  // a header could redefine it
        head + "#if X\n#endif\n#define X 1\n",                        // defined after the test
        head + "#define X CUDA_ARCH_LIST\n#if X\n#endif\n",           // its body names another's
        head + "#define CAT(a, b) a##b\n#define V CAT(CUDART_, VERSION)\n#if V\n#endif\n"}) {
    const std::string m = check(text);
    EXPECT_NE(m.find("a conditional may test only macros the file defines"), std::string::npos) << text << "\n" << m;
  }
  EXPECT_NE(check(head + "#ifdef NDEBUG\n#endif\n").find("k.cu:2: '#ifdef' tests 'NDEBUG', which this file does not define"),
            std::string::npos);
  EXPECT_NE(check(head + "#define CAT(a, b) a##b\n#if CAT(_, _)\n#endif\n").find("'CAT', which pastes tokens"), std::string::npos);
  EXPECT_NE(check(head + "#define X CUDA_ARCH_LIST\n#if X\n#endif\n").find("'X', which expands to 'CUDA_ARCH_LIST'"),
            std::string::npos);
  // A pushed and popped macro comes back with the header's or the command line's value.
  EXPECT_NE(check(head + "#pragma push_macro(\"NDEBUG\")\n#define NDEBUG 0\n#pragma pop_macro(\"NDEBUG\")\n#if NDEBUG\n#endif\n")
                .find("k.cu:2: '#pragma push_macro'"),
            std::string::npos);
  // Digraph spelling of '#'.
  EXPECT_NE(check(head + "%:ifdef NDEBUG\n%:endif\n").find("tests 'NDEBUG'"), std::string::npos);
}

TEST(GraderSourceRules, ReservedIdentifiersAndFileInternals) {
  EXPECT_NE(check("void f() { stdout->_fileno = 9; }\n").find("k.cu:1: uses '_fileno', a member of the C library's FILE"),
            std::string::npos);
  EXPECT_NE(check("void f() { stdout->_IO_write_ptr = 0; }\n").find("'_IO_write_ptr'"), std::string::npos);
  for (const char* w : {"__attribute__", "__builtin_frame_address", "__builtin_return_address", "_Pragma", "__thread",
                        "__gnu_cxx", "__libc_write", "__hip_atomic_load", "_Float16", "my__name"}) {
    const std::string m = check(std::string("int ") + w + ";\n");
    EXPECT_NE(m.find("'" + std::string(w) + "'"), std::string::npos) << w << ": " << m;
  }
  EXPECT_NE(check("int __builtin_frame_address;").find("reserved identifiers"), std::string::npos);
  // Ordinary names with one leading underscore (members, placeholders) are the student's own.
  EXPECT_EQ(check("struct T { int _n; float _data[4]; };\nauto g = std::bind(f, std::placeholders::_1);\n"), "");
  for (const char* w : {"__builtin_expect", "__builtin_assume_aligned", "__builtin_unreachable", "__builtin_prefetch",
                        "__popcll", "__ffsll", "__half2float", "__float2half_rn", "__nv_bfloat162", "__hfma2",
                        "__syncthreads_or", "__threadfence_block", "__reduce_add_sync", "__match_any_sync",
                        "__funnelshift_l", "__umulhi", "__fmaf_rn", "__float_as_int", "__int_as_float", "__ldcs",
                        "__stcs", "__managed__", "__constant__"})
    EXPECT_EQ(check(std::string("int y = ") + w + ";\n"), "") << w;
}

TEST(GraderSourceRules, WordsCannotHideFromTheLexer) {
  // A line splice inside the word.
  EXPECT_NE(check("void f() { stdout->_fil\\\neno = 3; }\n").find("'_fileno'"), std::string::npos);
  EXPECT_NE(check("void f() { stdout->_fil\\  \neno = 3; }\n").find("'_fileno'"), std::string::npos);
  // A raw string with a quote inside, then the word.
  EXPECT_NE(check("const char* s = R\"x( \" )x\";\nint a = __CUDACC__;\n\"\n").find("k.cu:2:"), std::string::npos);
  // Digit separators open no character literal.
  EXPECT_NE(check("int n = 1'000'000'000;\nint a = __CUDACC__;\n'\n").find("k.cu:2:"), std::string::npos);
  // A splice that continues a // comment hides the next line from the compiler: refusing it is harmless.
  // Comments and literals are not code.
  EXPECT_EQ(check("// __CUDACC__ _fileno asm\n/* #ifdef NDEBUG\n */ const char* s = \"__clang__ _fileno\";\n"), "");
  // An unterminated character literal ends at its line: the next line is read.
  EXPECT_NE(check("#warning don't\nint a = __GNUC__;\n").find("k.cu:2:"), std::string::npos);
  // Line numbers after splices are the file's own.
  EXPECT_NE(check("#define A \\\n  1\nint b;\nint a = __clang__;\n").find("k.cu:4:"), std::string::npos);
}

TEST(GraderSourceRules, LineDirectivesAreRefused) {
  EXPECT_NE(check("#line 10 \"other.cu\"\nint a;\n").find("k.cu:1: a #line directive"), std::string::npos);
  EXPECT_NE(check("# 33 \"other.cu\"\nint a;\n").find("#line directive"), std::string::npos);
}

TEST(GraderSourceRules, AssemblyAndHooks) {
  EXPECT_NE(check("void f() { asm(\"syscall\"); }\n").find("inline assembly"), std::string::npos);
  EXPECT_NE(check("extern \"C\" void __sanitizer_cov_load4(unsigned*);\n").find("tracing hooks"), std::string::npos);
  EXPECT_NE(check("int x = gpulab_emu_icount;\n").find("'gpulab_emu_icount'"), std::string::npos);
}

TEST(GraderSourceRules, PreprocessedTextRefusesOnlyWhatNoHeaderProduces) {
  // What assert, offsetof and the portability layer's qualifiers expand to is fine there.
  EXPECT_EQ(check_preprocessed("(static_cast<bool>(x) ? void(0) : __assert_fail(\"x\", \"k.cu\", 3, __extension__ "
                               "__PRETTY_FUNCTION__));\n__attribute__((used)) static thread_local float s[4];\n",
                               "k.cu"),
            "");
  const std::string m = check_preprocessed("\n\nvoid f() { stdout->_fileno = 3; }\n", "k.cu");
  EXPECT_NE(m.find("k.cu:3: after preprocessing, uses '_fileno'"), std::string::npos) << m;
  EXPECT_NE(check_preprocessed("__sanitizer_cov_load4(p);\n", "k.cu").find("tracing hooks"), std::string::npos);
}

/// Every kernel file of the repository a hand-in could be (the stubs, the references and their
/// steps, the verdict suites' hand-ins, the CUDA corpus, the examples) passes; the adversarial
/// hand-ins are refused or not by their own statements, elsewhere.
TEST(GraderSourceRules, EveryKernelFileOfTheRepositoryPasses) {
  int files = 0;
  for (const char* dir : {"labs", "solutions", "grader/tests/submissions", "common/emu/tests/cuda-corpus", "docs/examples"})
    for (const auto& e : fs::recursive_directory_iterator(fs::path(GPULAB_TEST_SOURCE_DIR) / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cu" && ext != ".cuh")) continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      EXPECT_EQ(check_source(text.str(), e.path().filename().string()), "") << e.path();
      ++files;
    }
  EXPECT_GT(files, 100);
}

/// The emulator's own tests are no hand-ins: those that probe the compiler (__clang__, GNU
/// attributes, __builtin_alloca, the builtin atomics the device pass traces) or the emulator's internals (gpulab_emu_*, GPULAB_*) are refused
/// for those words alone; every CUDA intrinsic they use is allowed.
TEST(GraderSourceRules, EmulatorTestsUseOnlyAllowedIntrinsics) {
  const std::set<std::string> probes = {"__attribute__", "__clang__", "__GNUC__", "__builtin_alloca", "__builtin_FILE",
                                         "__atomic_fetch_add"};
  for (const auto& e : fs::recursive_directory_iterator(fs::path(GPULAB_TEST_SOURCE_DIR) / "common/emu/tests")) {
    if (!e.is_regular_file() || e.path().extension() != ".cu") continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    // Refused words one by one: blank each refused word's line and read again.
    std::string t = text.str();
    for (int guard = 0; guard < 200; ++guard) {
      const std::string m = check_source(t, "t.cu");
      if (m.empty()) break;
      const std::size_t q = m.find('\'');
      const std::string word = q == std::string::npos ? "" : m.substr(q + 1, m.find('\'', q + 1) - q - 1);
      const bool directive = m.find("a conditional may test only") != std::string::npos;
      const bool internals = word.rfind("gpulab_emu_", 0) == 0 || word.rfind("GPULAB_", 0) == 0;
      EXPECT_TRUE(probes.count(word) || internals || (directive && m.find("tests '__") != std::string::npos))
          << e.path() << ": " << m;
      const int line = std::atoi(m.c_str() + 5);
      std::size_t at = 0;
      for (int l = 1; l < line; ++l) at = t.find('\n', at) + 1;
      const std::size_t end = t.find('\n', at);
      t.replace(at, end - at, std::string(end - at, ' '));
    }
  }
}

}  // namespace
