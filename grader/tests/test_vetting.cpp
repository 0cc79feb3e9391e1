// Vetting: every rule is shown broken by a tiny file compiled for the purpose (and the message
// must name the offending thing and the rule); the labs' real files, the known submissions and
// the grader's own staging must pass.
// This file: staging, hand-in files, includes, the labs' real objects; the symbol rules are in
// test_vetting_symbols.cpp.
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "handin.hpp"
#include "vetting_test_util.hpp"

using namespace gpulab::grade::vetting;
using namespace vetting_test;

namespace {

// ---- staging --------------------------------------------------------------------------------

TEST_F(Vetting, StagedTextDropsTheByteOrderMarkAndKeepsLineEndings) {
  EXPECT_EQ(staged_text("\xEF\xBB\xBFint x;\r\nint y;\r\n", "/h/row_sum.cu"),
            "#line 1 \"/h/row_sum.cu\"\nint x;\r\nint y;\r\n");
  EXPECT_EQ(staged_text("int x;\n", "a\"b\\c?\?/d\ne\x01.cu"), "#line 1 \"a\\\"b\\\\c\\?\\?/d?e?.cu\"\nint x;\n");
}

TEST_F(Vetting, AByteOrderMarkAndAnyPathStillCompileAndAreNamedInMessages) {
  const std::string solution = "\xEF\xBB\xBF" + read(kSource + "/solutions/01-coalescing/row_sum.cu");
  const std::string error_line = std::to_string(std::count(solution.begin(), solution.end(), '\n') + 2);
  const fs::path staged = dir_ / "staged.cu";
  const std::vector<std::string> cxx{GPULAB_TEST_CXX, "-fsyntax-only", "-x", "c++", "-std=c++17",
                                     "-I" + kSource + "/common/include", "-I" + kSource + "/common/emu/include",
                                     "-I" + kSource + "/labs/01-coalescing", staged.string()};
  const std::pair<std::string, std::string> paths[] = {  // the path, and as the compiler shows it
      {"/home/a b/we\"ird\\dir/row_sum.cu", "/home/a b/we\"ird\\dir/row_sum.cu"},
      {"/tmp/line\nbreak ?\?/row_sum.cu", "/tmp/line?break ?\?/row_sum.cu"}};
  for (const auto& [display, shown] : paths) {
    write(staged, staged_text(solution, display));
    const ProcessResult ok = run_process(cxx, {}, 120);
    EXPECT_TRUE(ok.ok()) << display << "\n" << ok.output;
    write(staged, staged_text(solution + "\nint broken = ;\n", display));
    const ProcessResult bad = run_process(cxx, {}, 120);
    EXPECT_FALSE(bad.ok());
    EXPECT_TRUE(Has(bad.output, {shown + ":" + error_line}));
  }
}

// ---- hand-in files ----------------------------------------------------------------------------

TEST_F(Vetting, HandinFilesInsideTheHandinAreAcceptedLinksLeavingItAreNot) {
  const fs::path h = dir_ / "handin", file = h / "labs/01-coalescing/row_sum.cu";  // a hand-in's own tree: not the working copy
  write(h / "mine/row_sum.cu", "void row_sum(const float*, float*, int) {}\n");
  fs::create_directories(file.parent_path());
  fs::create_symlink("../../mine/row_sum.cu", file);  // a link within the hand-in: fine
  std::string resolved;
  EXPECT_EQ(resolve_handin_file(h.string(), file.string(), resolved), "");
  EXPECT_EQ(resolved, fs::canonical(h / "mine/row_sum.cu").string());

  fs::remove(file);  // a link to the reference solution
  fs::create_symlink(kSource + "/solutions/01-coalescing/row_sum.cu", file);
  EXPECT_TRUE(Has(resolve_handin_file(h.string(), file.string(), resolved), {"symbolic link", "outside the hand-in"}));
  EXPECT_EQ(resolved, "");

  fs::remove_all(h / "labs");  // a directory on the way that leads into the repository
  fs::create_symlink(kSource + "/labs", h / "labs");
  EXPECT_TRUE(Has(resolve_handin_file(h.string(), file.string(), resolved), {"labs is a symbolic link", "outside"}));

  fs::create_symlink(kSource + "/solutions/01-coalescing/row_sum.cu", dir_ / "link.cu");  // the hand-in is a link
  EXPECT_TRUE(Has(resolve_handin_file((dir_ / "link.cu").string(), (dir_ / "link.cu").string(), resolved),
                  {"is a symbolic link"}));
  EXPECT_TRUE(Has(resolve_handin_file(h.string(), (h / "../../etc/passwd").string(), resolved), {"not inside"}));
}

TEST_F(Vetting, HandinFilesMustBeSmallRegularUnlinkedFiles) {
  std::string resolved;
  write(dir_ / "one.cu", "int x;\n");
  EXPECT_EQ(resolve_handin_file((dir_ / "one.cu").string(), (dir_ / "one.cu").string(), resolved), "");
  ASSERT_EQ(mkfifo((dir_ / "fifo.cu").c_str(), 0600), 0);
  EXPECT_TRUE(Has(resolve_handin_file(dir_.string(), (dir_ / "fifo.cu").string(), resolved), {"not a regular file"}));
  write(dir_ / "big.cu", std::string(kMaxHandinFileBytes + 1, ' '));
  EXPECT_TRUE(Has(resolve_handin_file(dir_.string(), (dir_ / "big.cu").string(), resolved), {"1 MiB"}));
  fs::create_hard_link(dir_ / "one.cu", dir_ / "two.cu");
  EXPECT_TRUE(Has(resolve_handin_file(dir_.string(), (dir_ / "two.cu").string(), resolved), {"hard links"}));
}

// ---- includes ---------------------------------------------------------------------------------

class Includes : public Vetting {
 protected:
  /// Stages `code` as the student's row_sum.cu and compiles it with a dependency file.
  std::string depfile(const std::string& code, const std::string& lab = "01-coalescing") {
    const fs::path staged = dir_ / "stage" / "row_sum.cu", dep = dir_ / "row_sum.d";
    write(staged, staged_text(code, "/home/student/row_sum.cu"));
    const ProcessResult p = run_process({GPULAB_TEST_CXX, "-x", "c++", "-std=c++17", "-c", staged.string(), "-o",
                                         (dir_ / "row_sum.o").string(), "-MD", "-MF", dep.string(),
                                         "-I" + kSource + "/common/include", "-I" + kSource + "/common/emu/include",
                                         "-I" + kSource + "/grader/common", "-I" + kSource + "/labs/" + lab},
                                        {}, 120);
    EXPECT_TRUE(p.ok()) << p.output;
    return dep.string();
  }
  std::string check(const std::string& dep, std::vector<std::string> dirs = {}, const std::string& lab = "01-coalescing",
                    const std::string& header = "row_sum.hpp") {
    dirs.insert(dirs.end(), {kSource + "/common/include", kSource + "/common/emu/include", (dir_ / "stage").string()});
    return check_dependencies(dep, kSource, dirs, {kSource + "/labs/" + lab + "/" + header});
  }
};

TEST_F(Includes, TheLabsFilesAndGpulabHeadersPass) {
  // The stubs as shipped (the copies the verdict suite grades), not labs/, which the student edits.
  const std::string stubs = kSource + "/grader/tests/submissions";
  EXPECT_EQ(check(depfile(read(stubs + "/01-coalescing/stub/row_sum.cu"))), "");
  EXPECT_EQ(check(depfile(read(kSource + "/solutions/01-coalescing/row_sum.cu"))), "");
  EXPECT_EQ(check(depfile(read(stubs + "/06-sgemm/stub/sgemm.cu"), "06-sgemm"), {}, "06-sgemm", "sgemm.hpp"), "");
  EXPECT_EQ(check(depfile("#include <cstdio>\n#include <vector>\n#include \"gpulab/host.hpp\"\n")), "");
}

TEST_F(Includes, TheSolutionsAndTheGraderAreRefused) {
  const std::string solution = kSource + "/solutions/01-coalescing/row_sum.cu";
  EXPECT_TRUE(Has(check(depfile("// mine\n#include \"" + solution + "\"\n")),
                  {"row_sum.cu:2 includes " + fs::canonical(solution).string(),
                   "may include only its lab's contract header (row_sum.hpp), gpulab's headers and system headers"}));
  const std::string relative = fs::relative(solution, dir_ / "stage").string();  // ../../work/main/...
  EXPECT_TRUE(Has(check(depfile("#include \"" + relative + "\"\n")), {"row_sum.cu:1 includes " + solution}));
  EXPECT_TRUE(Has(check(depfile("#include \"gpulab/grade/protocol.hpp\"\n")), {"grader/common/gpulab/grade/protocol.hpp"}));
  // The reference sgemm includes its own headers: allowed only where its directory is allowed.
  const std::string dep = depfile("#include \"" + kSource + "/solutions/06-sgemm/sgemm_configs.hpp\"\n", "06-sgemm");
  EXPECT_TRUE(Has(check(dep, {}, "06-sgemm", "sgemm.hpp"), {"solutions/06-sgemm/sgemm_configs.hpp", "(sgemm.hpp)"}));
  EXPECT_EQ(check(dep, {kSource + "/solutions/06-sgemm"}, "06-sgemm", "sgemm.hpp"), "");
}

TEST_F(Includes, DependencyFilesOfEveryCompilerAreRead) {
  write(dir_ / "stage/with space.h", "");
  write(dir_ / "d1", "obj.o : " + (dir_ / "stage/row_sum.cu").string() + " \\\n  " + (dir_ / "stage/with\\ space.h").string() +
                         " \\\r\n /usr/include/stdio.h\n/usr/include/stdio.h:\n");
  EXPECT_EQ(check((dir_ / "d1").string()), "");
  write(dir_ / "d2", "obj.o: #deps 3, deps mtime 1 (VALID)\n    " + (dir_ / "stage/row_sum.cu").string() +
                         "\n    /etc/passwd\n    /proc/self/environ\n\n");
  EXPECT_TRUE(Has(check((dir_ / "d2").string()), {"includes /etc/passwd", "includes /proc/", "gpulab's headers"}));
  EXPECT_TRUE(Has(check((dir_ / "missing.d").string()), {"missing or empty"}));
}

TEST_F(Includes, NvccsNameOfAHandInUnderAQuotedFolderIsTheHandIn) {
  // nvcc writes the #line name `.../a"b c/row_sum.cu` as `.../a\ ` (cut at the quote).
  const std::string handin = (dir_ / "a\"b c/row_sum.cu").string();
  write(dir_ / "d3", "obj.o : obj.cu \\\n  " + (dir_ / "a").string() + "\\ \\\n  /usr/include/stdio.h\n");
  EXPECT_EQ(check_dependencies((dir_ / "d3").string(), kSource, {}, {handin}), "");
  // A cut name that is not the start of the hand-in's own path is still refused.
  write(dir_ / "d4", "obj.o : obj.cu \\\n  " + (dir_ / "b").string() + "\\ \\\n");
  EXPECT_TRUE(Has(check_dependencies((dir_ / "d4").string(), kSource, {}, {handin}), {"includes"}));
}

TEST_F(Includes, ForbiddenHeaderOnlyLibrariesAreRefusedByTheirHeaders) {
  // CUB and Thrust are headers: the submission instantiates their templates, so no symbol of
  // theirs can be refused; their directories in the dependency list give them away (lab 05).
  write(dir_ / "cub/device/device_radix_sort.cuh", "");
  write(dir_ / "d5", "obj.o : " + (dir_ / "stage/row_sum.cu").string() + " /usr/include/stdio.h \\\n  " +
                         (dir_ / "cub/device/device_radix_sort.cuh").string() + "\n");
  const std::vector<std::string> forbidden = {"cub", "thrust", "hipcub", "rocprim"};
  EXPECT_TRUE(Has(check_library_headers((dir_ / "d5").string(), forbidden),
                  {"device_radix_sort.cuh: this lab does not allow the cub library", "write the algorithm yourself"}));
  EXPECT_EQ(check_library_headers((dir_ / "d5").string(), {}), "");
  EXPECT_EQ(check_library_headers((dir_ / "d5").string(), {"thrust"}), "");
}

TEST_F(Includes, ALabsForbiddenLibrariesAreRefusedByDirectory) {
  // Lab 04's rubric refuses CUB & co. by the directory a header lies in, however it was reached;
  // a file name that merely contains the word does not count.
  write(dir_ / "stage/reduce.cu", "#line 1 \"/home/student/reduce.cu\"\n#include \"gpulab/gpu.hpp\"\n"
                                   "#include <cub/device/device_reduce.cuh>\n");
  write(dir_ / "d5", "obj.o : " + (dir_ / "stage/reduce.cu").string() +
                         " \\\n  /usr/local/cuda/include/cccl/cub/device/device_reduce.cuh \\\n"
                         "  /usr/local/cuda/include/cccl/cub/util_type.cuh \\\n  /usr/include/cubic.h\n");
  const std::string refused = check_library_headers((dir_ / "d5").string(), {"cub", "hipcub", "rocprim", "thrust"});
  // (The path is the real one: /usr/local/cuda may be a link to /usr/local/cuda-13.0.)
  EXPECT_TRUE(Has(refused, {"reduce.cu:2 includes /usr/local/cuda",
                            "/include/cccl/cub/device/device_reduce.cuh: this lab does not allow the cub library"}))
      << refused;
  EXPECT_EQ(refused.find("util_type"), std::string::npos) << "one line per library: " << refused;
  EXPECT_EQ(check_library_headers((dir_ / "d5").string(), {"thrust"}), "");
  EXPECT_EQ(check_library_headers((dir_ / "d5").string(), {}), "");
}

// ---- the real thing ------------------------------------------------------------------------------

std::vector<std::string> objects_of(const std::string& lab, const std::string& target) {
  std::vector<std::string> out;
  const fs::path d = fs::path(kBuild) / "grader/labs" / lab / "CMakeFiles" / (target + ".dir");
  if (fs::exists(d))
    for (const auto& e : fs::recursive_directory_iterator(d))
      if (e.path().extension() == ".o") out.push_back(e.path().string());
  return out;
}

std::set<std::string> real_protected_symbols(const std::string& lab) {
  static std::map<std::string, std::set<std::string>> cache;
  if (cache.count(lab)) return cache[lab];
  std::vector<std::string> files;
  std::stringstream libs(GPULAB_TEST_LIBRARIES);
  for (std::string f; std::getline(libs, f, '|');) files.push_back(f);
  for (const auto& o : objects_of(lab, "lab-" + lab + "-checks")) files.push_back(o);
  return cache[lab] = defined_symbols(files);
}

TEST(VettingRealObjects, TheLabsStubsAndSolutionsPass) {
  for (const auto& [lab, contract, file] : {std::tuple{"01-coalescing", "row_sum", "row_sum.cu"},
                                             std::tuple{"06-sgemm", "sgemm", "sgemm.cu"}}) {
    const auto protect = real_protected_symbols(lab);
    EXPECT_GT(protect.size(), 20u);
    for (const char* impl : {"stub", "solution"}) {  // the stub as shipped (labs/ is the student's)
      const auto objects = objects_of(lab, std::string("lab-") + lab + "-" + impl);
      ASSERT_FALSE(objects.empty()) << lab << " " << impl << ": build the lab's targets first";
      EXPECT_EQ(check_object_symbols(objects, {contract}, protect, file), "") << lab << " " << impl;
    }
  }
}

TEST(VettingRealObjects, TheProtectedSymbolsAreTheLibrariesAndTheChecksOwn) {
  const auto protect = real_protected_symbols("01-coalescing");
  EXPECT_TRUE(protect.count("_ZN6gpulab11synchronizeEPKci"));                     // gpulab_host
  EXPECT_TRUE(protect.count("_ZN29correctness_tiny_sizes_Test10test_info_E") ||  // the checks' tests
              std::any_of(protect.begin(), protect.end(), [](const std::string& s) { return s.find("_Test") != std::string::npos; }));
  if (std::string(GPULAB_TEST_BACKEND) == "emu") {
    EXPECT_TRUE(protect.count("_ZN6gpulab3emu14findings_totalEv"));
    EXPECT_TRUE(protect.count("warpSize"));
    EXPECT_TRUE(protect.count("__sanitizer_cov_load4"));
  }
  for (const auto& s : protect) {  // template instances a submission makes too are not protected
    EXPECT_NE(s.rfind("_ZNSt6vector", 0), 0u) << s;
    EXPECT_NE(s, "DW.ref.__gxx_personality_v0");
  }
}

TEST(VettingRealObjects, KnownSubmissionsPassExceptTheOnesThatCheat) {
  if (std::string(GPULAB_TEST_CXX).find("clang") == std::string::npos) GTEST_SKIP() << "needs clang++";
  char tmpl[] = "/tmp/gpulab-vetting-subs-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  for (const auto& e : fs::recursive_directory_iterator(kSource + "/grader/tests/submissions")) {
    // does_not_compile does not; uses_cub and uses_cub_radix_sort include CUB, which only a CUDA
    // toolkit has (their refusal by header: Includes.ForbiddenHeaderOnlyLibrariesAreRefusedByTheirHeaders).
    if (e.path().extension() != ".cu" || e.path().stem() == "does_not_compile" || e.path().stem() == "uses_cub" ||
        e.path().stem() == "uses_cub_radix_sort")
      continue;
    // submissions/<lab>/file.cu, or submissions/<lab>/stub/file.cu (the stub as shipped)
    const std::string lab = fs::relative(e.path(), kSource + "/grader/tests/submissions").begin()->string(),
                      obj = std::string(tmpl) + "/x.o";
    // Plain CUDA (<<<>>> launches, extern __shared__) is compiled from its translation, as the
    // grader does (common/emu/cuda2emu).
    std::string source = e.path().string();
    const std::string text = read(source);
    if (text.find("<<<") != std::string::npos || text.find("extern __shared__") != std::string::npos) {
      const std::string tool = std::string(kBuild) + "/common/emu/cuda2emu/gpulab-cuda2emu";
      ASSERT_TRUE(fs::exists(tool)) << tool << " is missing: the emu build makes it (common/emu/cuda2emu)";
      const std::string translated = std::string(tmpl) + "/translated.cu";
      const ProcessResult tr = run_process({tool, source, "-o", translated}, {}, 60);
      ASSERT_TRUE(tr.ok()) << source << tr.output;
      source = translated;
    }
    const ProcessResult p = run_process(
        {GPULAB_TEST_CXX, "-x", "c++", "-std=c++17", "-O2", "-g", "-fsanitize-coverage=func,trace-loads,trace-stores",
         "-I" + kSource + "/common/include", "-I" + kSource + "/common/emu/include",
         "-I" + kSource + "/common/emu/include/cuda_compat", "-I" + kSource + "/labs/" + lab,
         "-iquote", e.path().parent_path().string(), "-c", source, "-o", obj},
        {}, 300);
    ASSERT_TRUE(p.ok()) << e.path() << p.output;
    const std::string message =
        check_object_symbols({obj}, {"row_sum", "sgemm"}, real_protected_symbols(lab), e.path().filename().string());
    if (e.path().stem() == "calls_vendor_library")
      EXPECT_TRUE(Has(message, {"calls_vendor_library.cu:10 references dlopen", "does not allow", "no dynamic loading"}));
    else if (e.path().stem() == "exits_early")
      EXPECT_TRUE(Has(message, {"references exit", "no exit handlers or signals"}));
    else
      EXPECT_EQ(message, "") << e.path();
  }
  fs::remove_all(tmpl);
}

}  // namespace

// A failed compile's messages as the report shows them: each error with its quoted source and
// notes, no warning and none of a warning's quoted lines; nvcc's "file(line): error" too.
TEST(CompilerErrors, ErrorsWithTheirSourceWarningsLeftOut) {
  const std::string gcc =
      "k.cu: In function 'void f()':\n"
      "k.cu:3:7: warning: unused variable 'x' [-Wunused-variable]\n"
      "    3 |   int x;\n"
      "      |       ^\n"
      "k.cu:4:3: error: 'y' was not declared in this scope\n"
      "    4 |   y = 1;\n"
      "      |   ^\n"
      "k.cu:1:1: note: in expansion of macro 'M'\n"
      "k.cu:9:5: warning: unused parameter 'n'\n"
      "    9 | int g(int n) {\n";
  const std::string shown = gpulab::grade::compiler_errors(gcc);
  EXPECT_NE(shown.find("k.cu:4:3: error: 'y' was not declared"), std::string::npos) << shown;
  EXPECT_NE(shown.find("    4 |   y = 1;"), std::string::npos) << shown;
  EXPECT_NE(shown.find("note: in expansion of macro"), std::string::npos) << shown;
  EXPECT_EQ(shown.find("warning"), std::string::npos) << shown;
  EXPECT_EQ(shown.find("int x;"), std::string::npos) << "a warning's quoted line without its warning:\n" << shown;
  EXPECT_EQ(shown.find("int g(int n)"), std::string::npos) << shown;
  const std::string nvcc =
      "k.cu(12): warning #177-D: variable \"z\" was declared but never referenced\n"
      "    int z;\n"
      "        ^\n"
      "k.cu(14): error: identifier \"w\" is undefined\n"
      "    w = 2;\n"
      "    ^\n"
      "1 error detected in the compilation of \"k.cu\".\n";
  const std::string nv = gpulab::grade::compiler_errors(nvcc);
  EXPECT_NE(nv.find("k.cu(14): error: identifier \"w\" is undefined\n    w = 2;"), std::string::npos) << nv;
  EXPECT_EQ(nv.find("int z;"), std::string::npos) << nv;
  // The linker's causes.
  EXPECT_NE(gpulab::grade::compiler_errors("/usr/bin/ld: k.o: in function `f':\nk.cu:(.text+0x5): undefined reference to `g'\n"
                                           "collect2: error: ld returned 1 exit status\n")
                .find("undefined reference to `g'"),
            std::string::npos);
}
