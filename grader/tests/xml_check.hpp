// A small XML well-formedness check for the grader's JUnit reports (no XML library needed).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

/// Tags nest and close, attributes are quoted, only the five predefined entities, no control
/// characters. Returns false with `why` set at the first problem.
inline bool well_formed_xml(const std::string& x, std::string& why) {
  std::vector<std::string> stack;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] == '&') {
      const auto semi = x.find(';', i);
      const std::string ent = x.substr(i, semi == std::string::npos ? 0 : semi - i + 1);
      if (ent != "&lt;" && ent != "&gt;" && ent != "&amp;" && ent != "&quot;" && ent != "&apos;") {
        why = "bad entity at " + std::to_string(i);
        return false;
      }
      continue;
    }
    if (x[i] != '<') {
      if (static_cast<unsigned char>(x[i]) < 0x20 && x[i] != '\n' && x[i] != '\t' && x[i] != '\r') {
        why = "control character at " + std::to_string(i);
        return false;
      }
      continue;
    }
    const auto end = x.find('>', i);
    if (end == std::string::npos) {
      why = "unterminated tag";
      return false;
    }
    std::string tag = x.substr(i + 1, end - i - 1);
    i = end;
    if (tag[0] == '?') continue;
    if (std::count(tag.begin(), tag.end(), '"') % 2) {
      why = "unbalanced quotes in <" + tag + ">";
      return false;
    }
    if (tag[0] == '/') {
      if (stack.empty() || stack.back() != tag.substr(1)) {
        why = "mismatched </" + tag.substr(1) + ">";
        return false;
      }
      stack.pop_back();
    } else if (tag.back() != '/') {
      stack.push_back(tag.substr(0, tag.find_first_of(" \t\n")));
    }
  }
  if (!stack.empty()) why = "unclosed <" + stack.back() + ">";
  return stack.empty();
}

