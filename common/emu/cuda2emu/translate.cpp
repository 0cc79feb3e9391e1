// The translation works on the tokens of a C++ lexer (lex.cpp) over the raw text of the file. Why
// that is enough, and sound:
//
// * Comments, string and character literals (raw strings included), line splices and digraphs
//   are lexed as a C++ compiler lexes them: a `<<<` inside a comment or a literal is part of a
//   comment or literal token, never punctuation, so it is never rewritten.
// * C++ lexes `<<<` as `<<` `<` and `>>>` as `>>` `>` (maximal munch). A launch opens where a
//   `<<` token is immediately followed, with no byte between them, by a `<` token, and is not
//   the name `operator<<` taking explicit template arguments (`operator<<<T>`). In valid C++ a
//   `<` cannot start an expression, so no other program text has that shape.
// * The configuration ends at the first `>>` immediately followed by `>` that is outside every
//   (), [] and {} opened inside the configuration. A shift (`n >> 1`) is `>>` followed by
//   something else; a template-id whose closing brackets are nested in parentheses, brackets or
//   braces (`dim3(f<g<int>>(n))`, a lambda) is skipped by the bracket matching. The one shape
//   that reads differently from CUDA is a template-id ending in `>>>` written unparenthesized in
//   the configuration (`k<<<f<g<h<int>>>(n), b>>>`); its rewrite does not compile, so it is not
//   silently mistranslated, and parentheses fix it.
// * The configuration is not split into grid/block/shared/stream here: it becomes the argument
//   list of launch_config(...), so the C++ parser splits it exactly as CUDA's expression-list
//   grammar does (commas inside template arguments `f<a, b>(n)` included) and the missing
//   shared size and stream take their defaults (0, no stream).
// * The callee is the postfix-expression before `<<<`: identifiers joined by `::`, `.`, `->`
//   (and `template`), each optionally followed by template arguments `<...>`, calls `(...)` and
//   subscripts `[...]`, or a parenthesized expression (`(*fp)`). It is found walking back from
//   `<<<` with exact bracket matching, so `ns::k<float, 256>`, `table[i]`, `obj.kernels[2]`,
//   `(*fp)` and `static_cast<K>(p)` are all whole callees and `a + k<<<...>>>()` launches `k`.
// * The arguments are the `(...)` that follows `>>>`, matched exactly; they stay as written: the
//   translation's cuda_launch(...) returns the launch, which that argument list calls.
// * Only the punctuation (`<<<`, `>>>`) is replaced and text is inserted before the callee; no newline is inserted or removed, so every line keeps its number. The
//   rewrite is a local token rewrite, so it also works in a macro's body, a template and a lambda.
//   Not rewritten: a launch whose `<<<` or `>>>` comes out of a macro expansion (`#define CFG
//   <<<1, 32>>>`) or token pasting; those are reported as errors when the `<<<` half is in this
//   file.
#include "translate.hpp"

#include "lex.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace gpulab::cuda2emu {
namespace {

struct Edit {
  unsigned begin, end;  // bytes [begin, end) are replaced
  std::string text;
};

bool is(const Token& t, const char* punct) { return t.kind == TokenKind::Punctuation && t.spelling == punct; }

bool is_opening(const Token& t) { return is(t, "(") || is(t, "[") || is(t, "{"); }
bool is_closing(const Token& t) { return is(t, ")") || is(t, "]") || is(t, "}"); }
char closer_of(const std::string& open) { return open == "(" ? ')' : open == "[" ? ']' : '}'; }

/// Keywords that act as a name inside a callee.
bool name_like_keyword(const Token& t) {
  static const char* words[] = {"this", "static_cast", "reinterpret_cast", "const_cast", "dynamic_cast"};
  return t.kind == TokenKind::Keyword &&
         std::any_of(std::begin(words), std::end(words), [&](const char* w) { return t.spelling == w; });
}
bool is_name(const Token& t) { return t.kind == TokenKind::Identifier || name_like_keyword(t); }

/// Tokens that can end a postfix-expression, so that a following `(`, `[` or `<` is its suffix.
bool ends_postfix(const Token& t) {
  return is_name(t) || is(t, ")") || is(t, "]") || is(t, ">") || is(t, ">>");
}

class Translator {
 public:
  Translator(std::string path, const std::string& text, std::vector<Token> tokens)
      : path_(std::move(path)), text_(text), t_(std::move(tokens)) {}

  Translation run() {
    Translation out;
    std::vector<Edit> edits;
    rewrite_dynamic_shared(edits, out);
    for (std::size_t i = 0; i + 1 < t_.size(); ++i) {
      if (!opens_launch(i)) continue;
      std::string error;
      if (!rewrite(i, edits, error)) {
        out.errors.push_back(path_ + ":" + std::to_string(line_of(t_[i].begin)) + ": " + error);
        continue;
      }
      ++out.launches;
    }
    // Edits never overlap (each launch touches its own punctuation and the byte before its
    // callee); equal insertion points keep the order in which they were made.
    std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
    std::string body;
    unsigned at = 0;
    for (const Edit& e : edits) {
      body.append(text_, at, e.begin - at);
      body += e.text;
      at = e.end;
    }
    body.append(text_, at, std::string::npos);
    // The include goes first (the launches need it, and a plain CUDA file may include nothing,
    // as nvcc includes cuda_runtime.h by itself); #line then gives back the file's own numbering.
    out.text = (out.launches + out.shared_arrays > 0 ? "#include \"gpulab/emu/cuda_launch.hpp\"\n" : "") +
               std::string("#line 1 \"") +
               escaped(path_) + "\"\n" + body;
    return out;
  }

 private:
  /// `extern __shared__ [align] T name[];` (CUDA's dynamic shared memory: every such array of a
  /// kernel starts at the block's dynamic shared memory, whatever its type) becomes, on one line,
  ///   in a function:      T* const name = ::gpulab::dynamic_shared<T>();
  ///   at namespace scope: const ::gpulab::emu::DynamicSharedArray<T> name{};  (indexes and
  ///                       converts to T* as the array would, per block)
  /// The scope is told by the braces around it: only namespace and extern "C" braces keep
  /// namespace scope (the declaration cannot stand in a class).
  void rewrite_dynamic_shared(std::vector<Edit>& edits, Translation& out) const {
    std::vector<bool> namespace_scope;  // one per open brace
    for (std::size_t i = 0; i < t_.size(); ++i) {
      const Token& t = t_[i];
      if (is(t, "{")) {
        std::size_t k = i;
        while (k > 0 && (t_[k - 1].kind == TokenKind::Identifier || is(t_[k - 1], "::"))) --k;
        const bool ns = (k > 0 && t_[k - 1].spelling == "namespace") ||
                        (i >= 2 && t_[i - 2].spelling == "extern" && t_[i - 1].kind == TokenKind::Literal);
        namespace_scope.push_back(ns);
        continue;
      }
      if (is(t, "}")) {
        if (!namespace_scope.empty()) namespace_scope.pop_back();
        continue;
      }
      if (t.spelling != "extern" || i + 1 >= t_.size() || t_[i + 1].spelling != "__shared__") continue;
      // The type: the tokens up to the name, without alignment specifiers.
      std::size_t end = i + 2;
      while (end < t_.size() && !is(t_[end], ";")) ++end;
      std::string type, error;
      std::size_t name = std::string::npos;
      if (end >= t_.size() || end < i + 6 || !is(t_[end - 1], "]") || !is(t_[end - 2], "[") ||
          t_[end - 3].kind != TokenKind::Identifier) {
        error = "an `extern __shared__` declaration must be `extern __shared__ T name[];`";
      } else {
        name = end - 3;
        for (std::size_t k = i + 2; k < name; ++k) {
          if (t_[k].spelling == "__align__" || t_[k].spelling == "alignas" || t_[k].spelling == "__attribute__") {
            const std::size_t open = k + 1;
            if (open < name && is(t_[open], "(")) {
              const std::size_t close = match_forward(open);
              if (close != std::string::npos && close < name) {
                k = close;
                continue;
              }
            }
            error = "cannot read the alignment of this `extern __shared__` declaration";
            break;
          }
          type += (type.empty() ? "" : " ") + t_[k].spelling;
        }
        if (type.empty() && error.empty()) error = "this `extern __shared__` declaration has no type";
      }
      if (!error.empty()) {
        out.errors.push_back(path_ + ":" + std::to_string(line_of(t.begin)) + ": " + error);
        continue;
      }
      const bool at_namespace_scope =
          std::all_of(namespace_scope.begin(), namespace_scope.end(), [](bool ns) { return ns; });
      const std::string& n = t_[name].spelling;
      edits.push_back({t.begin, t_[end].end,
                       at_namespace_scope
                           ? "const ::gpulab::emu::DynamicSharedArray<" + type + "> " + n + "{};"
                           : type + "* const " + n + " = ::gpulab::dynamic_shared<" + type + ">();"});
      ++out.shared_arrays;
      i = end;
    }
  }

  std::string path_;
  const std::string& text_;
  std::vector<Token> t_;

  static std::string escaped(const std::string& s) {
    std::string r;
    for (char c : s) {
      if (c == '\\' || c == '"') r += '\\';
      r += c;
    }
    return r;
  }

  int line_of(unsigned offset) const {
    return 1 + static_cast<int>(std::count(text_.begin(), text_.begin() + offset, '\n'));
  }

  bool adjacent(std::size_t i) const { return i + 1 < t_.size() && t_[i].end == t_[i + 1].begin; }

  bool opens_launch(std::size_t i) const {
    return is(t_[i], "<<") && is(t_[i + 1], "<") && adjacent(i) &&
           !(i > 0 && t_[i - 1].kind == TokenKind::Keyword && t_[i - 1].spelling == "operator");
  }

  /// Index of the bracket that closes the one opened at `open`, or npos.
  std::size_t match_forward(std::size_t open) const {
    std::vector<char> want;
    for (std::size_t k = open; k < t_.size(); ++k) {
      if (is_opening(t_[k])) want.push_back(closer_of(t_[k].spelling));
      else if (is_closing(t_[k])) {
        if (want.empty() || want.back() != t_[k].spelling[0]) return std::string::npos;
        want.pop_back();
        if (want.empty()) return k;
      }
    }
    return std::string::npos;
  }

  /// Index of the bracket that opens the one closed at `close` ()/[], or npos.
  std::size_t match_back(std::size_t close) const {
    std::vector<std::string> want;
    for (std::size_t k = close + 1; k-- > 0;) {
      const Token& t = t_[k];
      if (is_closing(t)) want.push_back(t.spelling == ")" ? "(" : t.spelling == "]" ? "[" : "{");
      else if (is_opening(t)) {
        if (want.empty() || want.back() != t.spelling) return std::string::npos;
        want.pop_back();
        if (want.empty()) return k;
      }
    }
    return std::string::npos;
  }

  /// Index of the `<` that opens the template arguments closed at `close` (a `>` or `>>`).
  std::size_t match_angle_back(std::size_t close) const {
    int depth = 0;
    for (std::size_t k = close + 1; k-- > 0;) {
      const Token& t = t_[k];
      if (is(t, ">")) ++depth;
      else if (is(t, ">>")) depth += 2;
      else if (is(t, "<") && --depth == 0) return k;
      else if (is(t, ")") || is(t, "]")) {
        k = match_back(k);
        if (k == std::string::npos) return k;
      } else if (is(t, ";") || is(t, "{") || is(t, "}") || is(t, "(") || is(t, "[")) {
        return std::string::npos;
      }
      if (depth < 0) return std::string::npos;
    }
    return std::string::npos;
  }

  /// First token of the callee whose last token is `last`, or npos.
  std::size_t callee_start(std::size_t last) const {
    std::size_t k = last;
    while (true) {
      std::size_t start;
      if (is(t_[k], ")") || is(t_[k], "]")) {
        start = match_back(k);
        if (start == std::string::npos) return start;
        if (start > 0 && ends_postfix(t_[start - 1])) {  // a call or subscript suffix
          k = start - 1;
          continue;
        }
      } else if (is(t_[k], ">") || is(t_[k], ">>")) {
        const std::size_t open = match_angle_back(k);
        if (open == std::string::npos || open == 0 || !is_name(t_[open - 1])) return std::string::npos;
        k = open - 1;
        continue;
      } else if (is_name(t_[k])) {
        start = k;
      } else {
        return std::string::npos;
      }
      // `start` begins a primary; a `::`, `.` or `->` before it continues the callee.
      std::size_t before = start;
      if (before > 0 && t_[before - 1].kind == TokenKind::Keyword && t_[before - 1].spelling == "template") --before;
      if (before == 0) return start;
      const Token& link = t_[before - 1];
      if (is(link, ".") || is(link, "->")) {
        if (before < 2) return std::string::npos;
        k = before - 2;
        continue;
      }
      if (is(link, "::")) {
        if (before >= 2 && (is_name(t_[before - 2]) || is(t_[before - 2], ">") || is(t_[before - 2], ">>"))) {
          k = before - 2;
          continue;
        }
        return before - 1;  // `::k`, the global namespace
      }
      return start;
    }
  }

  bool rewrite(std::size_t i, std::vector<Edit>& edits, std::string& error) const {
    if (i == 0) return error = "`<<<` with no kernel before it", false;
    const std::size_t first = callee_start(i - 1);
    if (first == std::string::npos)
      return error = "cannot tell which kernel this `<<<` launches (write the kernel's name, or put the callee in parentheses)", false;
    // The configuration: up to `>>>` outside every bracket opened after `<<<`.
    std::size_t close = std::string::npos;
    std::vector<char> want;
    for (std::size_t k = i + 2; k < t_.size(); ++k) {
      const Token& t = t_[k];
      if (want.empty() && is(t, ">>") && adjacent(k) && is(t_[k + 1], ">")) {
        close = k;
        break;
      }
      if (is(t, ";") && want.empty()) break;
      if (is_opening(t)) want.push_back(closer_of(t.spelling));
      else if (is_closing(t)) {
        if (want.empty() || want.back() != t.spelling[0]) break;
        want.pop_back();
      }
    }
    if (close == std::string::npos)
      return error = "this `<<<` has no matching `>>>` (a launch whose `>>>` comes from a macro is not supported)", false;
    if (close == i + 2) return error = "a launch needs a configuration: <<<grid, block>>>", false;
    const std::size_t open_args = close + 2;
    if (open_args >= t_.size() || !is(t_[open_args], "("))
      return error = "`>>>` must be followed by the kernel's arguments in parentheses", false;
    if (match_forward(open_args) == std::string::npos) return error = "the kernel's argument list has no matching `)`", false;

    // The callee goes into GPULAB_KERNEL_OF(...), which names the kernel either way CUDA allows:
    // one function, or a template whose arguments the launch's arguments deduce (cuda_launch.hpp).
    edits.push_back({t_[first].begin, t_[first].begin, "::gpulab::emu::cuda_launch(GPULAB_KERNEL_OF("});
    // __FILE__ and __LINE__ stand where `<<<` stood: the launch's own file and line, also when
    // the launch is in a macro (then the line where the macro is used).
    edits.push_back({t_[i].begin, t_[i + 1].end, "), ::gpulab::emu::launch_config(__FILE__, __LINE__, "});
    // cuda_launch(...) is the launch, called with the argument list as written.
    edits.push_back({t_[close].begin, t_[close + 1].end, "))"});
    return true;
  }
};

}  // namespace

Translation translate(const std::string& path, const std::string& text) {
  return Translator(path, text, lex(text)).run();
}

}  // namespace gpulab::cuda2emu
