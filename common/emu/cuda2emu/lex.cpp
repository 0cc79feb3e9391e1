// The lexer of gpulab-cuda2emu. It only has to agree with a C++ compiler on where tokens start
// and end, and on which text is a comment or a literal: that is what keeps a `<<<` in a comment,
// a string or a raw string from being rewritten, and what makes `<<<` two tokens.
#include "lex.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace gpulab::cuda2emu {
namespace {

bool ident_start(unsigned char c) { return std::isalpha(c) || c == '_' || c == '$' || c >= 0x80; }
bool ident_char(unsigned char c) { return ident_start(c) || std::isdigit(c); }

bool is_keyword(const std::string& w) {
  static const char* const words[] = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
      "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
      "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default",
      "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false",
      "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new",
      "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public",
      "register", "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
      "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true",
      "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
      "wchar_t", "while", "xor", "xor_eq"};
  return std::any_of(std::begin(words), std::end(words), [&](const char* k) { return w == k; });
}

/// Punctuators, longest first within each length (maximal munch takes the first that matches).
const char* const kPunctuators[] = {
    "%:%:", "<<=", ">>=", "...", "->*", "<=>", "::", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++",
    "--", "->", ".*", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##", "<:", ":>", "<%", "%>", "%:"};

class Lexer {
 public:
  explicit Lexer(const std::string& text) : s_(text) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    while (skip_space_and_comments()) {
      const std::size_t b = i_;
      const unsigned char c = s_[i_];
      TokenKind kind = TokenKind::Punctuation;
      if (ident_start(c)) {
        while (i_ < s_.size() && ident_char(s_[i_])) ++i_;
        const std::string word = s_.substr(b, i_ - b);
        if (i_ < s_.size() && (s_[i_] == '"' || s_[i_] == '\'') && encoding_prefix(word)) {
          literal(word.back() == 'R');
          kind = TokenKind::Literal;
        } else {
          kind = is_keyword(word) ? TokenKind::Keyword : TokenKind::Identifier;
        }
      } else if (std::isdigit(c) || (c == '.' && i_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_ + 1])))) {
        number();
        kind = TokenKind::Literal;
      } else if (c == '"' || c == '\'') {
        literal(false);
        kind = TokenKind::Literal;
      } else {
        punctuator();
      }
      out.push_back({kind, s_.substr(b, i_ - b), static_cast<unsigned>(b), static_cast<unsigned>(i_)});
    }
    return out;
  }

 private:
  bool at(const char* p) const { return s_.compare(i_, std::strlen(p), p) == 0; }

  /// Skips whitespace, backslash-newlines and comments; false at the end of the text.
  bool skip_space_and_comments() {
    while (i_ < s_.size()) {
      const unsigned char c = s_[i_];
      if (std::isspace(c)) ++i_;
      else if (c == '\\' && splice_length(i_) > 0) i_ += splice_length(i_);
      else if (at("//")) {
        // To the end of the line; a backslash-newline continues the comment.
        while (i_ < s_.size() && s_[i_] != '\n') i_ += (s_[i_] == '\\' && splice_length(i_)) ? splice_length(i_) : 1;
      } else if (at("/*")) {
        const std::size_t e = s_.find("*/", i_ + 2);
        i_ = e == std::string::npos ? s_.size() : e + 2;
      } else {
        return true;
      }
    }
    return false;
  }

  /// Length of a backslash-newline at `k` (backslash, optional carriage return, newline), or 0.
  std::size_t splice_length(std::size_t k) const {
    if (k + 1 < s_.size() && s_[k + 1] == '\n') return 2;
    if (k + 2 < s_.size() && s_[k + 1] == '\r' && s_[k + 2] == '\n') return 3;
    return 0;
  }

  static bool encoding_prefix(const std::string& w) {
    static const char* const prefixes[] = {"L", "u", "U", "u8", "R", "LR", "uR", "UR", "u8R"};
    return std::any_of(std::begin(prefixes), std::end(prefixes), [&](const char* p) { return w == p; });
  }

  /// A string or character literal starting at the quote under i_ (raw: R"delim(...)delim"),
  /// with its user-defined suffix.
  void literal(bool raw) {
    const char quote = s_[i_++];
    if (raw && quote == '"') {
      const std::size_t open = s_.find('(', i_);
      const std::size_t nl = s_.find('\n', i_);
      if (open == std::string::npos || (nl != std::string::npos && nl < open)) {
        i_ = nl == std::string::npos ? s_.size() : nl;
        return;
      }
      const std::string close = ")" + s_.substr(i_, open - i_) + "\"";
      const std::size_t e = s_.find(close, open + 1);
      i_ = e == std::string::npos ? s_.size() : e + close.size();
    } else {
      while (i_ < s_.size() && s_[i_] != quote && s_[i_] != '\n') i_ += s_[i_] == '\\' ? 2 : 1;
      if (i_ < s_.size() && s_[i_] == quote) ++i_;
      i_ = std::min(i_, s_.size());
    }
    while (i_ < s_.size() && ident_char(s_[i_])) ++i_;  // user-defined literal suffix
  }

  /// A pp-number: digits, letters, '_', '.', digit separators and signed exponents.
  void number() {
    ++i_;
    while (i_ < s_.size()) {
      const unsigned char c = s_[i_];
      if ((c == '+' || c == '-') && std::strchr("eEpP", s_[i_ - 1])) ++i_;
      else if (c == '\'' && i_ + 1 < s_.size() && ident_char(s_[i_ + 1])) i_ += 2;
      else if (ident_char(c) || c == '.') ++i_;
      else break;
    }
  }

  void punctuator() {
    // [lex.pptoken]/3: `<::` not followed by `:` or `>` is `<` then `::` (not the digraph `<:`).
    if (at("<::") && !(i_ + 3 < s_.size() && (s_[i_ + 3] == ':' || s_[i_ + 3] == '>'))) {
      ++i_;
      return;
    }
    for (const char* p : kPunctuators)
      if (at(p)) {
        i_ += std::strlen(p);
        return;
      }
    ++i_;
  }

  const std::string& s_;
  std::size_t i_ = 0;
};

}  // namespace

std::vector<Token> lex(const std::string& text) { return Lexer(text).run(); }

}  // namespace gpulab::cuda2emu
