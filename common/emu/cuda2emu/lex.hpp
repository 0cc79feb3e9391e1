// cuda2emu/lex.hpp - the C++ lexer the translation works on: the file's raw text cut into
// preprocessing tokens (C++17 [lex.pptoken]), comments dropped, each token with its byte range.
#pragma once

#include <string>
#include <vector>

namespace gpulab::cuda2emu {

enum class TokenKind { Punctuation, Keyword, Identifier, Literal };

struct Token {
  TokenKind kind;
  std::string spelling;
  unsigned begin, end;  ///< byte offsets in the file: [begin, end)
};

/// The tokens of `text`. Comments are skipped; string, character and raw string literals (with
/// their encoding prefixes and user-defined suffixes) and numbers (pp-numbers) are one Literal
/// token each; punctuation is cut by maximal munch (`<<<` is `<<` then `<`; `>>>` is `>>` then
/// `>`), with the `<::` exception and the digraphs; a backslash-newline between tokens is
/// whitespace. An unterminated literal or comment runs to the end of its line (resp. file), as
/// the compiler would report it; nothing is an error here.
std::vector<Token> lex(const std::string& text);

}  // namespace gpulab::cuda2emu
