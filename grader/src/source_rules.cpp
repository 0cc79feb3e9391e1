#include "source_rules.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

namespace gpulab::grade::source_rules {
namespace {

/// A text as the compiler's lexer reads it: line splices joined (a word split by `\` and a
/// newline is one word), comments and literals blanked; `line[i]` is the line of the original
/// text that code[i] comes from.
struct Code {
  std::string code;
  std::vector<int> line;
};

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// Phase 2 of translation: a backslash, optional blanks and a newline vanish (compilers accept
/// the blanks, with a warning).
Code spliced(const std::string& text) {
  Code out;
  out.code.reserve(text.size());
  out.line.reserve(text.size());
  int line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') {
      std::size_t j = i + 1;
      while (j < text.size() && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r')) ++j;
      if (j < text.size() && text[j] == '\n') {
        i = j;
        ++line;
        continue;
      }
    }
    out.code += text[i];
    out.line.push_back(line);
    if (text[i] == '\n') ++line;
  }
  return out;
}

/// Where the raw string literal starting at `quote` (its `"`, after an R prefix) ends.
std::size_t raw_string_end(const std::string& s, std::size_t quote) {
  const std::size_t open = s.find('(', quote);
  if (open == std::string::npos || open - quote > 17) return s.size();
  const std::string close = ")" + s.substr(quote + 1, open - quote - 1) + "\"";
  const std::size_t end = s.find(close, open);
  return end == std::string::npos ? s.size() : end + close.size();
}

/// Comments, string and character literals become blanks (newlines in block comments and raw
/// strings too, as the compiler reads each as one token); a pp-number keeps its digit
/// separators (1'000) without opening a character literal. An unterminated literal ends at
/// the end of its line, as the compiler's does.
Code blanked(const std::string& text) {
  Code c = spliced(text);
  std::string& s = c.code;
  auto blank = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < s.size(); ++k) s[k] = ' ';
  };
  for (std::size_t i = 0; i < s.size();) {
    const char ch = s[i], next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (ch == '/' && next == '/') {
      const std::size_t end = s.find('\n', i);
      blank(i, end);
      i = end == std::string::npos ? s.size() : end;
    } else if (ch == '/' && next == '*') {
      const std::size_t end = s.find("*/", i + 2);
      const std::size_t stop = end == std::string::npos ? s.size() : end + 2;
      blank(i, stop);
      i = stop;
    } else if (std::isdigit(static_cast<unsigned char>(ch)) || (ch == '.' && std::isdigit(static_cast<unsigned char>(next)))) {
      // A pp-number: digits, letters, '_', '.', digit separators, and signs after e/E/p/P.
      std::size_t j = i + 1;
      while (j < s.size() && (word_char(s[j]) || s[j] == '.' || s[j] == '\'' ||
                              ((s[j] == '+' || s[j] == '-') && std::strchr("eEpP", s[j - 1]))))
        ++j;
      i = j;
    } else if (word_char(ch)) {
      std::size_t j = i;
      while (j < s.size() && word_char(s[j])) ++j;
      const std::string prefix = s.substr(i, j - i);
      const bool raw = j < s.size() && s[j] == '"' && !prefix.empty() && prefix.back() == 'R' &&
                       (prefix == "R" || prefix == "u8R" || prefix == "uR" || prefix == "UR" || prefix == "LR");
      if (raw) {
        const std::size_t end = raw_string_end(s, j);
        blank(j, end);
        i = end;
      } else {
        i = j;  // a literal's encoding prefix (u8, L) is followed by its quote, handled next
      }
    } else if (ch == '"' || ch == '\'') {
      std::size_t j = i + 1;
      while (j < s.size() && s[j] != ch && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
      const std::size_t stop = std::min(s.size(), j < s.size() && s[j] == ch ? j + 1 : j);
      blank(i, stop);
      i = stop;
    } else {
      ++i;
    }
  }
  return c;
}

// ---- the words -----------------------------------------------------------------------------

/// Inline assembly (raw system calls; `.incbin` reads files at compile time without a
/// dependency) and the emulator's tracing hooks and counters (calling them inflates the metrics).
const std::regex& assembly_or_hooks() {
  static const std::regex re(R"(asm|__asm|__asm__|__sanitizer_\w*|__builtin_trap_unless_\w*|gpulab_emu_\w*)");
  return re;
}

/// Words whose value depends on the compiler, the platform or the toolkit's version.
const std::regex& compiler_words() {
  static const std::regex re(
      "__(CUDA|NVCC|NVCOMPILER|clang|GNU|GLIBC|llvm|HIP|HIPCC|hip_|INTEL|ICC|ICL|amdgcn|AMDGCN|AMDGPU|gfx|x86_64|"
      "amd64|aarch64|ARM|arm|i386|linux|unix|OPTIMIZE|FAST_MATH|STDC|VERSION|SIZEOF|BYTE_ORDER|has_|is_identifier|"
      "building_module|SANITIZE|OPENMP|NO_INLINE|cplusplus|DATE__|TIME__)\\w*|__GNUG__|_MSC_\\w*|_WIN\\w*|_OPENMP|"
      "(CUDART|CUDA|HIP|HIPRT|ROCM|THRUST|CUB|CCCL|LIBCUDACXX|CUDNN|CUBLAS|CUSPARSE|CUFFT|CURAND|NCCL|RCCL|NVRTC|"
      "ROCPRIM|HIPCUB|ROCBLAS)_\\w*VER\\w*|NV_(IF|DISPATCH|IS|PROVIDES|HAS|ANY|NO)_\\w*|GPULAB_\\w+");
  return re;
}

/// The C library's FILE members (glibc's struct _IO_FILE): a descriptor swapped in one of them
/// makes printf write where the hand-in likes.
const std::regex& file_internals() {
  static const std::regex re(
      "_(fileno|flags2?|mode|lock|offset|chain|markers|shortbuf|codecvt|wide_data|freeres_\\w+|prevchain|"
      "vtable_offset|cur_column|old_offset|unused2)|_IO\\w*|__pad\\d");
  return re;
}

// Reserved names a kernel file legitimately writes: CUDA's and HIP's qualifiers and intrinsics,
// the standard's predefined names, and the harmless builtins. A trailing '*' makes a prefix.
const char* const kAllowedReserved =
    "__global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__ __restrict "
    "__launch_bounds__ __forceinline__ __noinline__ __inline__ __align__ __grid_constant__ __cluster_dims__ "
    "__FILE__ __LINE__ __func__ __FUNCTION__ __PRETTY_FUNCTION__ __VA_ARGS__ __VA_OPT__ __COUNTER__ "
    // synchronisation and warp-wide operations (HIP spells some without _sync)
    "__syncthreads* __syncwarp __threadfence* __nanosleep __trap __activemask __lane_id "
    "__shfl* __ballot __ballot_sync __any __any_sync __all __all_sync __uni_sync __match_* __reduce_* "
    // loads and stores with cache hints, address spaces, asynchronous copies
    "__ldg __ldcg __ldca __ldcs __ldlu __ldcv __stwb __stcg __stcs __stwt "
    "__isGlobal __isShared __isConstant __isLocal __isGridConstant __cvta_* __pipeline_* "
    // integer intrinsics
    "__popc* __clz* __ffs* __brev* __byte_perm __funnelshift* __mul24 __umul24 __mulhi __umulhi __mul64hi "
    "__umul64hi __sad __usad __hadd __rhadd __uhadd __urhadd __dp4a* __dp2a* "
    "__vabs* __vadd* __vsub* __vavg* __vhadd* __vcmp* __vset* __vmax* __vmin* __vneg* __vsad* __vabsdiff* "
    "__vimax* __vimin* __viadd* __vibmax* __vibmin* "
    // floating-point intrinsics and rounding modes
    "__fadd_* __fsub_* __fmul_* __fmaf_* __fma_* __fdiv_* __frcp_* __fsqrt_* __frsqrt_rn __fdividef __saturatef "
    "__dadd_* __dsub_* __dmul_* __ddiv_* __drcp_* __dsqrt_* "
    "__expf __exp10f __logf __log2f __log10f __sinf __cosf __tanf __sincosf __powf "
    // conversions and reinterpretations
    "__float2* __floats2* __float_as_* __double2* __double_as_* __int2* __int_as_* __uint2* __uint_as_* "
    "__ll2* __ull2* __longlong_as_* __hiloint2double __short2* __ushort2* __short_as_* __ushort_as_* "
    // 16-bit floats (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h)
    "__half* __nv_bfloat16* __nv_fp8* __bfloat16* __low2* __high2* __lows2* __highs2* __halves2* "
    "__habs* __hadd2 __hadd_sat* __hsub* __hmul* __hdiv* __hfma* __hneg* __heq* __hne* __hlt* __hle* __hgt* "
    "__hge* __hequ* __hneu* __hltu* __hleu* __hgtu* __hgeu* __hmax* __hmin* __hisnan* __hisinf* __hbeq2 "
    "__hbne2 __hble2 __hblt2 __hbge2 __hbgt2 __hcmadd "
    // builtins that only inform the optimiser, or count bits
    "__builtin_expect* __builtin_assume* __builtin_prefetch __builtin_unreachable __builtin_popcount* "
    "__builtin_clz* __builtin_ctz* __builtin_ffs* __builtin_parity* __builtin_bswap* __builtin_isnan "
    "__builtin_isinf __builtin_isfinite __builtin_huge_val* __builtin_inf* __builtin_nan* __builtin_fabs* "
    "__builtin_copysign*";

bool allowed_reserved(const std::string& w) {
  static const auto table = [] {
    std::pair<std::set<std::string>, std::vector<std::string>> t;
    std::istringstream in(kAllowedReserved);
    for (std::string n; in >> n;)
      if (n.back() == '*') t.second.push_back(n.substr(0, n.size() - 1));
      else t.first.insert(n);
    return t;
  }();
  if (table.first.count(w)) return true;
  for (const auto& p : table.second)
    if (w.compare(0, p.size(), p) == 0) return true;
  return false;
}

/// Reserved for the implementation in every scope: two underscores anywhere, or an underscore
/// and a capital letter first.
bool reserved(const std::string& w) {
  return w.find("__") != std::string::npos ||
         (w.size() > 1 && w[0] == '_' && std::isupper(static_cast<unsigned char>(w[1])));
}

const char* const kOneProgram = "(rule: source text, one program for every compiler)";
const char* const kOneProgramHint =
    "\n  hint: write the kernel for every compiler alike: the grader compiles this same file with nvcc (its registers"
    " and PTX predict the speed) and with the emulator's compiler (which runs it); a setting is a constexpr constant";

/// Why a word is refused anywhere in a hand-in, or empty.
std::string word_problem(const std::string& w, bool preprocessed) {
  if (std::regex_match(w, assembly_or_hooks()))
    return "uses '" + w +
           "', which the grader does not allow: a kernel file needs no inline assembly and must not call the"
           " emulator's tracing hooks or touch its instruction counters (rule: source text)\n  hint: write the kernel"
           " in CUDA C++";
  if (w == "GPULAB_CHECK") return {};
  if (!preprocessed && std::regex_match(w, compiler_words()))
    return "uses '" + w + "', which tells compilers, platforms or toolkit versions apart: the compilers the grader uses" +
           " would see different code " + kOneProgram + kOneProgramHint;
  if (std::regex_match(w, file_internals()))
    return "uses '" + w +
           "', a member of the C library's FILE: a kernel file has no use for it, and with it output could go where"
           " the grader keeps its record (rule: source text, reserved identifiers)\n  hint: print with printf or"
           " std::cout as they are";
  if (!preprocessed && reserved(w) && !allowed_reserved(w))
    return "uses '" + w +
           "', a name reserved for the compiler and its libraries (two underscores, or an underscore and a capital"
           " letter) that is not part of the CUDA vocabulary the grader allows (rule: source text, reserved"
           " identifiers)\n  hint: rename it, or use the standard spelling (alignas, thread_local, [[attributes]],"
           " std:: functions, __launch_bounds__ / __noinline__ / __forceinline__ for kernels)";
  return {};
}

// ---- directives ----------------------------------------------------------------------------

struct Word {
  std::string text;
  std::size_t at = 0;  // offset in Code::code
};

std::vector<Word> words_of(const std::string& code, std::size_t from, std::size_t to) {
  std::vector<Word> out;
  for (std::size_t i = from; i < to;) {
    const char c = code[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {  // a pp-number is no word (1e10, 0x1f, 10_km)
      while (i < to && (word_char(code[i]) || code[i] == '.' || code[i] == '\'')) ++i;
    } else if (word_char(c)) {
      std::size_t j = i;
      while (j < to && word_char(code[j])) ++j;
      out.push_back({code.substr(i, j - i), i});
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

/// One directive line of the file: its name ("if", "define", ...) and the words after it; for a
/// #define, the macro's name, parameters and body.
struct Directive {
  std::string name;
  std::vector<Word> words;
  std::size_t at = 0, end = 0;  // the name's offset in Code::code, and the line's end
  int depth = 0;                // conditional blocks around it
  std::string macro;
  std::set<std::string> parameters;
  std::vector<std::string> body;
  bool pastes = false;  // '#' or '##' in the body
};

/// A #define's parts, from the code after the directive's name.
void read_define(Directive& d, const std::string& code, std::size_t from) {
  if (d.words.empty()) return;
  d.macro = d.words[0].text;
  std::size_t body_at = d.words[0].at + d.macro.size();
  if (body_at < d.end && code[body_at] == '(') {  // function-like: '(' right after the name
    const std::size_t close = std::min(d.end, code.find(')', body_at));
    for (const Word& w : d.words)
      if (w.at > body_at && w.at < close) d.parameters.insert(w.text);
    body_at = close;
  }
  for (const Word& w : d.words)
    if (w.at > body_at) d.body.push_back(w.text);
  d.pastes = code.find('#', std::max(body_at, from)) < d.end;
}

std::vector<Directive> directives(const Code& c) {
  std::vector<Directive> out;
  int depth = 0;
  for (std::size_t start = 0; start < c.code.size();) {
    std::size_t end = c.code.find('\n', start);
    if (end == std::string::npos) end = c.code.size();
    std::size_t i = c.code.find_first_not_of(" \t\r\f\v", start);
    if (i < end && (c.code[i] == '#' || c.code.compare(i, 2, "%:") == 0)) {
      i += c.code[i] == '#' ? 1 : 2;
      i = std::min(end, c.code.find_first_not_of(" \t\r\f\v", i));
      Directive d;
      d.at = i;
      d.end = end;
      std::size_t j = i;
      while (j < end && word_char(c.code[j])) ++j;
      d.name = c.code.substr(i, j - i);
      d.words = words_of(c.code, j, end);
      if (d.name == "define") read_define(d, c.code, j);
      if (d.name == "endif" || d.name == "else" || d.name.rfind("elif", 0) == 0) --depth;
      d.depth = depth;
      if (d.name.rfind("if", 0) == 0 || d.name == "else" || d.name.rfind("elif", 0) == 0) ++depth;
      out.push_back(std::move(d));
    }
    start = end + 1;
  }
  return out;
}

bool conditional(const std::string& name) {
  return name == "if" || name == "ifdef" || name == "ifndef" || name == "elif" || name == "elifdef" ||
         name == "elifndef";
}

bool include(const std::string& name) { return name == "include" || name == "include_next" || name == "import"; }

/// Words of an #if expression that name no macro: operators spelt as words, and the literals.
bool operator_word(const std::string& w) {
  static const std::set<std::string> words = {"defined", "true",  "false",  "and",    "or",     "not",
                                              "bitand",  "bitor", "compl",  "xor",    "and_eq", "or_eq",
                                              "xor_eq",  "not_eq"};
  return words.count(w) > 0;
}

/// Why the macro `name` might not have the same value for every compiler at directive `use`, or
/// empty when it has: each of its definitions between the file's last #include (`after`) and
/// `use` pastes no tokens and names only parameters and such macros, and one of them is outside
/// any conditional block (so that no header's or compiler's definition is left).
std::string not_own(const std::vector<Directive>& ds, std::size_t use, const std::string& name, long after,
                    std::set<std::string>& seen) {
  if (!seen.insert(name).second) return {};  // a cycle stops expanding: no new words there
  bool top_level = false;
  for (std::size_t k = static_cast<std::size_t>(after + 1); k < use; ++k) {
    const Directive& d = ds[k];
    if (d.macro != name) continue;
    if (d.pastes) return "'" + name + "', which pastes tokens (## or #) and so can build any name, a compiler's macro too";
    top_level = top_level || d.depth == 0;
    for (const std::string& w : d.body)
      if (!d.parameters.count(w) && !operator_word(w) && w != "__VA_ARGS__")
        if (const std::string why = not_own(ds, use, w, after, seen); !why.empty())
          return "'" + name + "', which expands to " + why;
  }
  if (top_level) return {};
  return "'" + name + "', which this file does not define for itself (outside any #if block, after its last #include)";
}

std::string where(const Code& c, const std::string& name, std::size_t at) {
  return name + ":" + std::to_string(c.line[std::min(at, c.line.size() - 1)]);
}

/// The first conditional directive that tests something the file does not define for itself, a
/// #line directive or a line marker, a #pragma push_macro or pop_macro; empty when none.
std::string directive_problem(const Code& c, const std::string& name) {
  const std::vector<Directive> ds = directives(c);
  long last_include = -1;
  for (std::size_t k = 0; k < ds.size(); ++k)
    if (include(ds[k].name)) last_include = static_cast<long>(k);
  for (std::size_t k = 0; k < ds.size(); ++k) {
    const Directive& d = ds[k];
    if (d.name == "line" || (!d.name.empty() && std::isdigit(static_cast<unsigned char>(d.name[0]))))
      return where(c, name, d.at) + ": a #line directive renames or renumbers the file: the emulator's metrics and" +
             " nvcc's line table would no longer name the same source " + kOneProgram +
             "\n  hint: remove it; the grader names your file and its lines itself";
    const auto stack = std::find_if(d.words.begin(), d.words.end(), [](const Word& w) {
      return w.text == "push_macro" || w.text == "pop_macro";
    });
    if (d.name == "pragma" && stack != d.words.end())
      return where(c, name, d.at) + ": '#pragma " + stack->text + "' can bring back a header's or a compiler's" +
             " definition of a macro the file defined for itself, and so what a conditional tests " + kOneProgram +
             "\n  hint: remove it; define your macros once, after your #include lines";
    if (!conditional(d.name)) continue;
    for (const Word& w : d.words) {
      if (operator_word(w.text)) continue;
      std::set<std::string> seen;
      // Before the last #include every word fails: a header included later could still define it.
      const std::string why = not_own(ds, k, w.text, static_cast<long>(k) > last_include ? last_include : static_cast<long>(k), seen);
      if (why.empty()) continue;
      return where(c, name, w.at) + ": '#" + d.name + "' tests " + why +
             ": a conditional may test only macros the file defines outside any #if block, after its last #include,"
             " from its own macros alone, so that every compiler takes the same branch " + kOneProgram + kOneProgramHint;
    }
  }
  return {};
}

/// The first refused word of `c` (outside #include lines: a header's name is no word).
std::string first_word_problem(const Code& c, const std::string& name, bool preprocessed) {
  std::vector<std::pair<std::size_t, std::size_t>> headers;  // the #include lines
  for (const Directive& d : directives(c))
    if (include(d.name)) headers.emplace_back(d.at, d.end);
  for (const Word& w : words_of(c.code, 0, c.code.size())) {
    if (std::any_of(headers.begin(), headers.end(), [&](const auto& h) { return w.at >= h.first && w.at < h.second; }))
      continue;
    if (const std::string why = word_problem(w.text, preprocessed); !why.empty())
      return where(c, name, w.at) + ": " + why;
  }
  return {};
}

}  // namespace

std::string check_source(const std::string& text, const std::string& name) {
  const Code c = blanked(text);
  const std::string word = first_word_problem(c, name, false);
  const std::string directive = directive_problem(c, name);
  if (word.empty() || directive.empty()) return word.empty() ? directive : word;
  // Both: the one on the earlier line.
  auto line_of = [&](const std::string& m) { return std::atoi(m.c_str() + name.size() + 1); };
  return line_of(directive) < line_of(word) ? directive : word;
}

std::string check_preprocessed(const std::string& text, const std::string& name) {
  const std::string why = first_word_problem(blanked(text), name, true);
  if (why.empty()) return {};
  const std::size_t colon = why.find(": ", name.size());
  return why.substr(0, colon) + ": after preprocessing, " + why.substr(colon + 2);
}

}  // namespace gpulab::grade::source_rules
