// gpulab-cuda2emu's translation on tricky inputs: what it rewrites, what it leaves alone, and that
// every line keeps its number.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "translate.hpp"

namespace {

using gpulab::cuda2emu::translate;

const std::string kLaunch = "::gpulab::emu::cuda_launch(GPULAB_KERNEL_OF(";
const std::string kConfig = "), ::gpulab::emu::launch_config(__FILE__, __LINE__, ";

/// The translation without its two header lines (the include and `#line 1`).
std::string body(const std::string& in) {
  const auto t = translate("k.cu", in);
  EXPECT_TRUE(t.errors.empty()) << (t.errors.empty() ? "" : t.errors[0]);
  std::string s = t.text;
  if (t.launches > 0) {
    EXPECT_EQ(s.rfind("#include \"gpulab/emu/cuda_launch.hpp\"\n#line 1 \"k.cu\"\n", 0), 0u) << s;
    s.erase(0, s.find('\n', s.find("#line")) + 1);
  } else {
    EXPECT_EQ(s.rfind("#line 1 \"k.cu\"\n", 0), 0u) << s;
    s.erase(0, s.find('\n') + 1);
  }
  return s;
}

std::string launch(const std::string& callee, const std::string& config, const std::string& args) {
  return kLaunch + callee + kConfig + config + "))(" + args + ")";
}

TEST(Translate, SimpleLaunch) {
  EXPECT_EQ(body("k<<<g, b>>>(x, n);\n"), launch("k", "g, b", "x, n") + ";\n");
}

TEST(Translate, SharedAndStreamAreKeptForTheConfig) {
  EXPECT_EQ(body("k<<<g, b, 64 * sizeof(float), s>>>(x);"), launch("k", "g, b, 64 * sizeof(float), s", "x") + ";");
}

TEST(Translate, NoArguments) {
  EXPECT_EQ(body("k<<<1, 32>>>();"), launch("k", "1, 32", "") + ";");
  EXPECT_EQ(body("k<<<1, 32>>>( /* none */ );"), kLaunch + "k" + kConfig + "1, 32))( /* none */ );");
}

TEST(Translate, TemplateKernelAndQualifiedNames) {
  EXPECT_EQ(body("ns::k<float, 256><<<g, 256>>>(p);"), launch("ns::k<float, 256>", "g, 256", "p") + ";");
  EXPECT_EQ(body("::ns::k<T><<<g, b>>>(p);"), launch("::ns::k<T>", "g, b", "p") + ";");
  EXPECT_EQ(body("A<int>::k<<<g, b>>>(p);"), launch("A<int>::k", "g, b", "p") + ";");
}

TEST(Translate, ShiftInTemplateArgumentsOfTheCallee) {
  EXPECT_EQ(body("k<A<B<int>>><<<g, b>>>(p);"), launch("k<A<B<int>>>", "g, b", "p") + ";");
  EXPECT_EQ(body("k<(N >> 1)><<<g, b>>>(p);"), launch("k<(N >> 1)>", "g, b", "p") + ";");
}

TEST(Translate, ShiftsAndTemplatesInTheConfiguration) {
  EXPECT_EQ(body("k<<<n >> 8, dim3(f<g<int>>(n))>>>(p);"), launch("k", "n >> 8, dim3(f<g<int>>(n))", "p") + ";");
  // A comma inside template arguments: left to the C++ parser of launch_config(...).
  EXPECT_EQ(body("k<<<blocks<int, 4>(n), 256>>>(p);"), launch("k", "blocks<int, 4>(n), 256", "p") + ";");
}

TEST(Translate, ShiftOperatorsAreNotLaunches) {
  const std::string in = "int a = x << 3; std::cout << y >> z; bool c = p < q;\n";
  const auto t = translate("k.cu", in);
  EXPECT_EQ(t.launches, 0);
  EXPECT_EQ(body(in), in);
}

TEST(Translate, OperatorShiftWithTemplateArgumentsIsNotALaunch) {
  const std::string in = "auto& r = operator<<<int>(os, 1);\n";
  EXPECT_EQ(body(in), in);
}

TEST(Translate, StringsAndCommentsAreCopied) {
  const std::string in =
      "// k<<<1, 1>>>(x) in a comment\n"
      "/* k<<<1, 1>>>(x) */ const char* s = \"k<<<1,1>>>(x)\";\n"
      "const char* r = R\"(k<<<1, 1>>>(x))\"; char c = '<';\n";
  EXPECT_EQ(body(in), in);
}

TEST(Translate, CallablesAsCallees) {
  EXPECT_EQ(body("fp<<<1, 1>>>(p);"), launch("fp", "1, 1", "p") + ";");
  EXPECT_EQ(body("(*fp)<<<1, 1>>>(p);"), launch("(*fp)", "1, 1", "p") + ";");
  EXPECT_EQ(body("table[i]<<<1, 1>>>(p);"), launch("table[i]", "1, 1", "p") + ";");
  EXPECT_EQ(body("obj.kernels[2]<<<1, 1>>>(p);"), launch("obj.kernels[2]", "1, 1", "p") + ";");
  EXPECT_EQ(body("static_cast<K>(v)<<<1, 1>>>(p);"), launch("static_cast<K>(v)", "1, 1", "p") + ";");
  EXPECT_EQ(body("if (a + 1 < 2) k<<<1, 1>>>(p);"), "if (a + 1 < 2) " + launch("k", "1, 1", "p") + ";");
}

TEST(Translate, LambdasAndNestedBracketsInArguments) {
  const std::string args = "f([&](int i) { return v[i] > w[(i >> 1)]; }), {1, 2}, m[g(h(3))]";
  EXPECT_EQ(body("k<<<dim3{2, 2}, b>>>(" + args + ");"), launch("k", "dim3{2, 2}, b", args) + ";");
}

TEST(Translate, MultiLineLaunchKeepsEveryLine) {
  const std::string in =
      "void f() {\n"
      "  k\n"
      "    <<<grid,\n"
      "       block>>>\n"
      "    (a,\n"
      "     b);\n"
      "  int after = 0;\n"
      "}\n";
  const std::string out = body(in);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), std::count(in.begin(), in.end(), '\n'));
  // Every line that had no launch punctuation is unchanged, at the same line number.
  EXPECT_EQ(out,
            "void f() {\n"
            "  ::gpulab::emu::cuda_launch(GPULAB_KERNEL_OF(k\n"
            "    ), ::gpulab::emu::launch_config(__FILE__, __LINE__, grid,\n"
            "       block))\n"
            "    (a,\n"
            "     b);\n"
            "  int after = 0;\n"
            "}\n");
}

TEST(Translate, LaunchInsideATemplateFunction) {
  const std::string in = "template <class T, int B>\nvoid run(T* p) { k<T, B><<<1, B>>>(p); }\n";
  EXPECT_EQ(body(in), "template <class T, int B>\nvoid run(T* p) { " + launch("k<T, B>", "1, B", "p") + "; }\n");
}

TEST(Translate, LaunchInAMacroBody) {
  const std::string in = "#define LAUNCH(kern, n) \\\n  kern<<<(n + 255) / 256, 256>>>(x, n)\nLAUNCH(k, 10);\n";
  EXPECT_EQ(body(in), "#define LAUNCH(kern, n) \\\n  " + launch("kern", "(n + 255) / 256, 256", "x, n") + "\nLAUNCH(k, 10);\n");
}

TEST(Translate, LaunchInAMacroArgument) {
  EXPECT_EQ(body("CHECK(k<<<1, 1>>>(p));"), "CHECK(" + launch("k", "1, 1", "p") + ");");
}

TEST(Translate, TwoLaunchesOnALineAndALaunchInsideLambdaArguments) {
  EXPECT_EQ(body("a<<<1, 1>>>(p); b<<<2, 2>>>(q);"), launch("a", "1, 1", "p") + "; " + launch("b", "2, 2", "q") + ";");
  EXPECT_EQ(body("run([&] { k<<<1, 1>>>(p); });"), "run([&] { " + launch("k", "1, 1", "p") + "; });");
}

TEST(Translate, ConfigurationFromAMacroIsReported) {
  const auto t = translate("k.cu", "#define CFG <<<1, 1\nvoid f() {\n  k CFG>>>(p);\n}\n");
  ASSERT_EQ(t.errors.size(), 1u);
  EXPECT_NE(t.errors[0].find("k.cu:1:"), std::string::npos) << t.errors[0];
}

TEST(Translate, MissingArgumentListIsReported) {
  const auto t = translate("k.cu", "\n\nk<<<1, 1>>>;\n");
  ASSERT_EQ(t.errors.size(), 1u);
  EXPECT_NE(t.errors[0].find("k.cu:3: `>>>` must be followed"), std::string::npos) << t.errors[0];
}

TEST(Translate, LineDirectiveNamesTheFileEscaped) {
  const auto t = translate("dir with \"quote\"\\k.cu", "k<<<1, 1>>>(p);\n");
  EXPECT_NE(t.text.find("#line 1 \"dir with \\\"quote\\\"\\\\k.cu\"\n"), std::string::npos) << t.text;
}

TEST(Translate, LexerLiteralsThatHideLaunchPunctuation) {
  // Raw strings with a delimiter, escaped quotes, prefixes, digit separators, user-defined suffixes.
  const std::string in =
      "const char* a = R\"x(quote)\" k<<<1, 1>>>(p); still inside)x\";\n"
      "const char* b = \"\\\"k<<<1,1>>>(p)\"; char c = '\\''; char d = '\"';\n"
      "auto e = u8\"<<<\"; auto f = L'<'; int g = 1'000'000; auto h = 1.5e+3f; auto i = \"<<<\"_s;\n";
  const auto t = translate("k.cu", in);
  EXPECT_EQ(t.launches, 0);
  EXPECT_EQ(body(in), in);
}

TEST(Translate, LexerSplicesCommentsAndDigraphs) {
  // A backslash-newline continues a // comment; `<::` is `<` `::`; `>>=` is one token.
  const std::string in =
      "// a comment \\\n   k<<<1, 1>>>(continued comment);\n"
      "k<::ns::T><<<1, 1>>>(p); x >>= 1;\n";
  EXPECT_EQ(body(in), "// a comment \\\n   k<<<1, 1>>>(continued comment);\n" + launch("k<::ns::T>", "1, 1", "p") +
                          "; x >>= 1;\n");
}

TEST(Translate, LexerLineSpliceInsideALaunch) {
  const std::string in = "#define L(k) k<<<1, \\\n  32>>>(p)\nL(a);\n";
  EXPECT_EQ(body(in), "#define L(k) " + launch("k", "1, \\\n  32", "p") + "\nL(a);\n");
}

}  // namespace
