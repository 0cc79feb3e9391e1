// An XML 1.0 well-formedness check for the grader's JUnit reports (no XML library needed).
//
// Checks what a CI system's XML parser would reject: the document is valid UTF-8 (no overlong
// forms, no surrogates) made of XML Chars only (no C0 controls but \t \n \r, no U+FFFE/U+FFFF);
// an optional XML declaration first, then exactly one root element with only white space,
// comments and processing instructions around it; tags nest and close; names are names;
// attributes are separated by white space, quoted, unique and free of '<'; '&' starts one of the
// five predefined entities or a character reference to an XML Char; comments, processing
// instructions and CDATA sections are closed; "]]>" never appears in text. No DTDs.
#pragma once

#include <cctype>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

namespace xml_check_detail {

/// The code point of strict UTF-8 at x[i], or -1; `len` its bytes.
inline long utf8_at(const std::string& x, std::size_t i, std::size_t& len) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(x[i + k]); };
  len = 1;
  const unsigned char c = b(0);
  if (c < 0x80) return c;
  int n = c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : 0;
  if (n == 0) return -1;
  long cp = c & (0x3F >> n);
  for (int k = 1; k <= n; ++k) {
    if (i + k >= x.size() || (b(k) & 0xC0) != 0x80) return -1;
    cp = cp << 6 | (b(k) & 0x3F);
  }
  len = static_cast<std::size_t>(n) + 1;
  const long min[] = {0, 0x80, 0x800, 0x10000};
  if (cp < min[n] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return -1;  // overlong, surrogate
  return cp;
}

inline bool xml_char(long cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
         (cp >= 0x10000 && cp <= 0x10FFFF);
}

inline bool name_start(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalpha(u) || c == '_' || c == ':' || u >= 0x80;
}
inline bool name_char(char c) {
  return name_start(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
}
inline bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

struct Parser {
  const std::string& x;
  std::string& why;
  std::size_t i = 0;

  bool fail(const std::string& what) {
    why = what + " at byte " + std::to_string(i);
    return false;
  }
  bool at(const char* s) const { return x.compare(i, std::char_traits<char>::length(s), s) == 0; }
  bool skip_spaces() {
    const std::size_t from = i;
    while (i < x.size() && space(x[i])) ++i;
    return i > from;
  }
  bool name(std::string& out) {
    if (i >= x.size() || !name_start(x[i])) return fail("a name expected");
    const std::size_t from = i;
    while (i < x.size() && name_char(x[i])) ++i;
    out = x.substr(from, i - from);
    return true;
  }
  /// At '&': one of the five entities, or &#N; / &#xH; naming an XML Char.
  bool reference() {
    const std::size_t semi = x.find(';', i);
    if (semi == std::string::npos) return fail("'&' without ';'");
    const std::string ref = x.substr(i + 1, semi - i - 1);
    if (ref == "lt" || ref == "gt" || ref == "amp" || ref == "quot" || ref == "apos") {
      i = semi + 1;
      return true;
    }
    const bool hex = ref.size() > 2 && ref[1] == 'x';
    const std::string digits = ref.size() > 1 && ref[0] == '#' ? ref.substr(hex ? 2 : 1) : "";
    if (digits.empty() || digits.size() > 8 ||
        digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") != std::string::npos ||
        !xml_char(std::stol(digits, nullptr, hex ? 16 : 10)))
      return fail("bad reference &" + ref + ";");
    i = semi + 1;
    return true;
  }
  /// Skips past `end`, which must come.
  bool past(const char* end, const char* what) {
    const std::size_t e = x.find(end, i);
    if (e == std::string::npos) return fail(std::string("unterminated ") + what);
    i = e + std::char_traits<char>::length(end);
    return true;
  }
  /// At '<' followed by a name: the start tag, its attributes; pushes it unless it is empty.
  bool start_tag(std::vector<std::string>& open) {
    ++i;
    std::string tag, attr;
    if (!name(tag)) return false;
    std::set<std::string> seen;
    for (;;) {
      const bool spaced = skip_spaces();
      if (at("/>")) {
        i += 2;
        return true;
      }
      if (at(">")) {
        ++i;
        open.push_back(tag);
        return true;
      }
      if (!spaced) return fail("white space expected in <" + tag + ">");
      if (!name(attr)) return false;
      if (!seen.insert(attr).second) return fail("attribute " + attr + " twice");
      skip_spaces();
      if (!at("=")) return fail("'=' expected after " + attr);
      ++i;
      skip_spaces();
      if (i >= x.size() || (x[i] != '"' && x[i] != '\'')) return fail("unquoted value of " + attr);
      const char quote = x[i++];
      while (i < x.size() && x[i] != quote) {
        if (x[i] == '<') return fail("'<' in the value of " + attr);
        if (x[i] == '&') {
          if (!reference()) return false;
        } else {
          ++i;
        }
      }
      if (i >= x.size()) return fail("unterminated value of " + attr);
      ++i;
    }
  }
  bool document() {
    for (std::size_t p = 0, len = 0; p < x.size(); p += len) {
      const long cp = utf8_at(x, p, len);
      i = p;
      if (cp < 0) return fail("invalid UTF-8");
      if (!xml_char(cp)) {
        char code[16];
        std::snprintf(code, sizeof code, "U+%04lX", cp);
        return fail(std::string("character ") + code + " is not allowed in XML");
      }
    }
    i = 0;
    if (at("<?xml") && (x.size() == 5 || space(x[5]))) {
      if (!past("?>", "XML declaration")) return false;
    }
    std::vector<std::string> open;
    bool root = false;
    while (i < x.size()) {
      if (at("<!--")) {
        const std::size_t from = i + 4;
        if (!past("-->", "comment")) return false;
        if (x.substr(from, i - 3 - from).find("--") != std::string::npos) return fail("'--' in a comment");
      } else if (at("<![CDATA[")) {
        if (open.empty()) return fail("CDATA outside the root element");
        if (!past("]]>", "CDATA section")) return false;
      } else if (at("<?")) {
        i += 2;
        std::string target;
        if (!name(target)) return false;
        if (target.size() == 3 && std::tolower(target[0]) == 'x' && std::tolower(target[1]) == 'm' &&
            std::tolower(target[2]) == 'l')
          return fail("an XML declaration that is not at the start");
        if (!past("?>", "processing instruction")) return false;
      } else if (at("</")) {
        i += 2;
        std::string tag;
        if (!name(tag)) return false;
        skip_spaces();
        if (!at(">")) return fail("'>' expected after </" + tag);
        if (open.empty() || open.back() != tag) return fail("mismatched </" + tag + ">");
        open.pop_back();
        ++i;
      } else if (at("<")) {
        if (open.empty() && root) return fail("a second root element");
        if (i + 1 >= x.size() || !name_start(x[i + 1])) return fail("'<' that starts no tag");
        root = true;
        if (!start_tag(open)) return false;
      } else if (open.empty()) {
        if (!space(x[i])) return fail("text outside the root element");
        ++i;
      } else if (at("&")) {
        if (!reference()) return false;
      } else {
        if (at("]]>")) return fail("']]>' in text");
        ++i;
      }
    }
    if (!open.empty()) return fail("unclosed <" + open.back() + ">");
    if (!root) return fail("no root element");
    return true;
  }
};

}  // namespace xml_check_detail

/// True when `x` is a well-formed XML 1.0 document in UTF-8; else false with `why` set at the
/// first problem.
inline bool well_formed_xml(const std::string& x, std::string& why) {
  xml_check_detail::Parser p{x, why};
  return p.document();
}
