// Text from the code under test, made fit for a terminal, JSON and XML.
//
// Every string in a report may come from the code under test: compiler output, the lab process's
// output, and anything a lab process managed to write into its protocol file. Before it is shown
// or written it must be valid UTF-8 (nlohmann::json and XML parsers reject anything else), carry
// no terminal escape sequence (a submission could clear the screen or draw fake table rows), no
// control character XML 1.0 forbids, and be of bounded length.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "gpulab/grade/defences.hpp"

namespace gpulab::grade {

/// The longest string a report carries per field (a check's message, say); longer ones are cut
/// at a character boundary and end with "... (N more bytes)".
constexpr std::size_t kMaxTextBytes = 4096;

namespace detail {

enum Mode : unsigned { kPlain = 0, kConsole = 1, kSingleLine = 2 };

/// One code point of strict UTF-8 at s[i] (no overlong forms, no surrogates, at most U+10FFFF);
/// -1 when invalid, with `len` = the bytes of the ill-formed prefix, to be replaced by one U+FFFD.
inline long decode(std::string_view s, std::size_t i, std::size_t& len) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  len = 1;
  if (c < 0x80) return c;
  int n = 0;                           // continuation bytes
  unsigned char lo = 0x80, hi = 0xBF;  // the range allowed for the first of them
  if (c >= 0xC2 && c <= 0xDF) {
    n = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 2;
    if (c == 0xE0) lo = 0xA0;  // no overlong forms
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 3;
    if (c == 0xF0) lo = 0x90;  // no overlong forms
    if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return -1;  // a stray continuation byte, C0/C1 (always overlong) or F5..FF
  }
  long cp = c & (0x3F >> n);
  for (int k = 1; k <= n; ++k) {
    if (i + k >= s.size() || b(k) < (k == 1 ? lo : 0x80) || b(k) > (k == 1 ? hi : 0xBF)) return -1;
    cp = cp << 6 | (b(k) & 0x3F);
    len = k + 1;
  }
  return cp;
}

inline void append_utf8(std::string& o, long cp) {
  if (cp < 0x80) {
    o += static_cast<char>(cp);
  } else if (cp < 0x800) {
    o += static_cast<char>(0xC0 | cp >> 6);
    o += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    o += static_cast<char>(0xE0 | cp >> 12);
    o += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
    o += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    o += static_cast<char>(0xF0 | cp >> 18);
    o += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
    o += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
    o += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

inline bool bidi_control(long cp) {
  return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

inline std::string sanitise(std::string_view s, unsigned mode, std::size_t max_bytes) {
  // Switched off only by the adversarial suite, to show what the sanitising prevents.
  if (!defence_enabled("reports")) return std::string(s);
  // Escape sequences are tracked as a terminal would parse them, so that the whole sequence goes
  // (dropping ESC alone would still leave "[2J" behind); a string sequence (OSC, DCS, ...) ends
  // at BEL, ESC \ or, unlike on a terminal, a newline, so it cannot swallow the rest of a message.
  enum { kText, kEsc, kEscMid, kCsi, kString, kStringEsc } state = kText;
  std::string o;
  o.reserve(s.size());
  for (std::size_t i = 0, len = 0; i < s.size(); i += len) {
    long cp = decode(s, i, len);
    if (cp < 0) cp = 0xFFFD;
    switch (state) {
      case kEsc:
        if (cp == '[')
          state = kCsi;
        else if (cp == ']' || cp == 'P' || cp == 'X' || cp == '^' || cp == '_')
          state = kString;
        else if (cp >= 0x20 && cp <= 0x2F)
          state = kEscMid;
        else if (cp >= 0x30 && cp <= 0x7E)
          state = kText;
        else
          break;  // not a sequence after all: the character is text
        continue;
      case kEscMid:
        if (cp >= 0x20 && cp <= 0x2F) continue;
        state = kText;
        if (cp >= 0x30 && cp <= 0x7E) continue;
        break;
      case kCsi:
        if (cp >= 0x20 && cp <= 0x3F) continue;
        state = kText;
        if (cp >= 0x40 && cp <= 0x7E) continue;
        break;
      case kString:
      case kStringEsc:
        if (cp == '\n') break;
        state = cp == 0x07 || (state == kStringEsc && cp == '\\') ? kText : cp == 0x1B ? kStringEsc : kString;
        continue;
      case kText:
        break;
    }
    state = kText;
    if (cp == 0x1B)
      state = kEsc;
    else if (cp == 0x9B)
      state = kCsi;  // the 8-bit forms of CSI and OSC
    else if (cp == 0x9D)
      state = kString;
    if (cp == 0x1B || (cp >= 0x7F && cp <= 0x9F) || cp == 0xFFFE || cp == 0xFFFF) continue;
    if (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') continue;
    if ((mode & kConsole) && (cp == '\r' || bidi_control(cp))) continue;
    if ((mode & kSingleLine) && (cp == '\n' || cp == '\t' || cp == '\r')) cp = ' ';
    append_utf8(o, cp);
  }
  if (o.size() <= max_bytes) return o;
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(o[cut]) & 0xC0) == 0x80) --cut;  // a character boundary
  return o.substr(0, cut) + "... (" + std::to_string(o.size() - cut) + " more bytes)";
}

inline std::string escape_xml(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '&':
        o += "&amp;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&apos;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

}  // namespace detail

/// Valid UTF-8 whatever `s` holds: each invalid sequence becomes U+FFFD; terminal escape
/// sequences (ESC [ ..., ESC ] ... BEL, their 8-bit forms) are removed; NUL, the other C0
/// controls except \t \n \r, DEL, C1 controls, U+FFFE and U+FFFF are dropped.
inline std::string clean_text(std::string_view s, std::size_t max_bytes = kMaxTextBytes) {
  return detail::sanitise(s, detail::kPlain, max_bytes);
}

/// clean_text for a terminal: also without \r (it would let a line overwrite the table) and
/// the bidirectional controls (they reorder what is shown); `single_line` turns \n, \t into spaces.
inline std::string console_text(std::string_view s, bool single_line, std::size_t max_bytes = kMaxTextBytes) {
  return detail::sanitise(s, detail::kConsole | (single_line ? unsigned{detail::kSingleLine} : 0u), max_bytes);
}

/// clean_text with & < > " ' escaped: fit for XML 1.0 element content and attribute values
/// (`single_line` also turns \n, \t, \r into spaces, for attributes).
inline std::string xml_text(std::string_view s, bool single_line = false, std::size_t max_bytes = kMaxTextBytes) {
  return detail::escape_xml(detail::sanitise(s, single_line ? detail::kSingleLine : detail::kPlain, max_bytes));
}

}  // namespace gpulab::grade
