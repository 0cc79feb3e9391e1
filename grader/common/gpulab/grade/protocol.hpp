// gpulab/grade/protocol.hpp - the line format in which a lab process reports to the grader.
//
// The lab process appends one line per event to its report file, flushing each, so that the
// grader keeps everything reported before a crash or a time-out:
//   plan   <check> <kind>                     every check it will run, first
//   begin  <check>                            a check starts
//   check  <check> <kind> <0|1> <value> <threshold> <unit> <message>
//   info   <key> <value>                      device, seed, metrics tables, ...
//   metric <check> <launch> <file:line> <global|shared> <load|store|atomic> <requests>
//          <per request> <ideal per request> <efficiency> <lane stride bytes>   (emulator)
// Fields are tab-separated; tabs, newlines and backslashes inside fields are escaped.
#pragma once

#include <string>
#include <vector>

namespace gpulab::grade::protocol {

inline std::string escape(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '\\': o += "\\\\"; break;
      case '\t': o += "\\t"; break;
      case '\n': o += "\\n"; break;
      case '\r': break;
      default: o += c;
    }
  }
  return o;
}

inline std::string unescape(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      const char n = s[++i];
      o += n == 't' ? '\t' : n == 'n' ? '\n' : n;
    } else {
      o += s[i];
    }
  }
  return o;
}

inline std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> f;
  std::string cur;
  for (char c : line) {
    if (c == '\t') {
      f.push_back(unescape(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  f.push_back(unescape(cur));
  return f;
}

inline std::string join(const std::vector<std::string>& fields) {
  std::string o;
  for (std::size_t i = 0; i < fields.size(); ++i) o += (i ? "\t" : "") + escape(fields[i]);
  return o + "\n";
}

}  // namespace gpulab::grade::protocol
