#include "reports.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpulab/grade/defences.hpp"
#include "sanitise.hpp"

namespace gpulab::grade {
namespace {

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

std::string value_text(const Check& c) {
  if (c.value.empty()) return "";
  std::string s = c.value + (c.unit.empty() ? "" : " " + c.unit);
  if (!c.threshold.empty()) s += " (threshold " + c.threshold + ")";
  return s;
}

// ---- files ------------------------------------------------------------------------------------

/// `what`: the reason errno gives; errno is read first, before building the message can change it.
std::string why_errno(const char* what) {
  const int error = errno;
  return std::string(what) + ": " + std::strerror(error);
}

/// Throws unless `path` is missing or a regular file. lstat, never open: opening a FIFO for
/// writing blocks until someone reads it, and a symbolic link could point anywhere.
void refuse_special(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    throw ReportError(std::strerror(errno));
  }
  if (S_ISREG(st.st_mode)) return;
  if (S_ISLNK(st.st_mode)) throw ReportError("it is a symbolic link (reports are written only to regular files)");
  if (S_ISDIR(st.st_mode)) throw ReportError("it is a directory");
  if (S_ISFIFO(st.st_mode)) throw ReportError("it is a FIFO (named pipe)");
  if (S_ISSOCK(st.st_mode)) throw ReportError("it is a socket");
  throw ReportError(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "it is a device" : "it is not a regular file");
}

void write_all(int fd, const std::string& content) {
  for (std::size_t done = 0; done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw ReportError(why_errno("write failed"));
    done += static_cast<std::size_t>(n);
  }
}

/// What the grader did before its reports were hardened; only for the adversarial suite.
void write_plainly(const std::string& path, const std::string& content, bool append) {
  std::ofstream out(path, append ? std::ios::app : std::ios::trunc);
  out << content;
  if (!out) throw ReportError(why_errno("cannot write"));
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& content) {
  if (!defence_enabled("reports")) return write_plainly(path, content, false);
  refuse_special(path);
  const std::filesystem::path target(path);
  const std::string name = target.filename().string();
  if (name.empty() || name == "." || name == "..") throw ReportError("it is not a file name");
  const std::string dir = target.has_parent_path() ? target.parent_path().string() : ".";
  // A fresh, unpredictable name, created exclusively: nothing already there (a link planted by
  // someone else, a stale file) is ever opened.
  std::string temp;
  int fd = -1;
  std::random_device entropy;
  for (int attempt = 0; fd < 0; ++attempt) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".tmp-%08x%08x", entropy(), entropy());
    temp = dir + "/." + name + suffix;
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt == 100)) {
      const int error = errno;
      throw ReportError("cannot create a file in " + dir + ": " + std::strerror(error));
    }
  }
  try {
    write_all(fd, content);
    if (::fsync(fd) != 0) throw ReportError(why_errno("fsync failed"));
    const int closed = ::close(fd);
    fd = -1;
    if (closed != 0) throw ReportError(why_errno("close failed"));
    // rename() replaces the name itself: were `path` swapped for a link or a FIFO since the
    // check above, that link or FIFO is replaced, never followed or opened.
    if (::rename(temp.c_str(), path.c_str()) != 0) throw ReportError(why_errno("cannot rename the new file over it"));
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  // The rename itself survives a crash once the directory is on disk too.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void append_to_file(const std::string& path, const std::string& content) {
  if (!defence_enabled("reports")) return write_plainly(path, content, true);
  refuse_special(path);
  // O_NONBLOCK: a FIFO put there since the check fails to open (ENXIO) instead of hanging.
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd < 0) throw ReportError(errno == ELOOP ? "it is a symbolic link" : std::strerror(errno));
  struct stat st {};
  try {
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) throw ReportError("it is not a regular file");
    write_all(fd, content);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) throw ReportError(why_errno("close failed"));
}

void write_json(const Report& r, const std::string& path) { write_file_atomically(path, json_report(r)); }
void write_junit(const Report& r, const std::string& path) { write_file_atomically(path, junit_report(r)); }
void append_github_summary(const Report& r, const std::string& path) { append_to_file(path, github_summary(r)); }

// ---- JSON -------------------------------------------------------------------------------------

namespace {

using Json = nlohmann::ordered_json;  // keys in the order written, as docs/report-format.md shows

Json text(const std::string& s) { return clean_text(s); }

/// A number stays a JSON number (an integer when written as one); "nan", "inf", "" become null.
Json number(const std::string& s) {
  if (s.empty()) return nullptr;
  char* end = nullptr;
  errno = 0;
  const long long i = std::strtoll(s.c_str(), &end, 10);
  if (!*end && errno == 0) return i;
  const double v = std::strtod(s.c_str(), &end);
  if (*end || !std::isfinite(v)) return nullptr;
  return v;
}

/// Points to two decimals: 1/3 of a point is 0.33 in the report, not 0.3333333333333333.
Json points(double v) { return std::isfinite(v) ? std::round(v * 100) / 100 : 0.0; }

Json check_json(const Check& c) {
  return {{"name", text(c.name)},
          {"kind", text(c.kind)},
          {"passed", c.passed},
          {"value", number(c.value)},
          {"threshold", number(c.threshold)},
          {"unit", text(c.unit)},
          {"points", points(c.points)},
          {"max_points", points(c.max_points)},
          {"message", text(c.message)}};
}

Json metric_json(std::vector<std::string> m) {
  m.resize(std::max<std::size_t>(m.size(), 10));  // a short row must not read past its end
  return {{"check", text(m[0])},         {"launch", text(m[1])},
          {"line", text(m[2])},          {"space", text(m[3])},
          {"access", text(m[4])},        {"requests", number(m[5])},
          {"per_request", number(m[6])}, {"ideal_per_request", number(m[7])},
          {"efficiency", number(m[8])},  {"lane_stride_bytes", number(m[9])}};
}

Json lab_json(const LabResult& l) {
  Json lab = {{"lab", text(l.lab)},
              {"impl", text(l.impl)},
              {"source", text(l.source)},
              {"status", l.graded ? "graded" : "not graded"},
              {"isolation", text(l.isolation)},
              {"passed", l.graded && l.passed},
              {"score", points(l.score)},
              {"max_score", points(l.max_score)}};
  lab["info"] = Json::object();
  for (const auto& [key, value] : l.info) lab["info"][clean_text(key)] = text(value);
  lab["metrics"] = Json::array();
  for (const auto& m : l.metrics) lab["metrics"].push_back(metric_json(m));
  lab["checks"] = Json::array();
  for (const auto& c : l.checks) lab["checks"].push_back(check_json(c));
  lab["seconds"] = Json::object();
  for (const auto& [phase, s] : l.seconds) lab["seconds"][clean_text(phase)] = std::round(s * 10) / 10;
  return lab;
}

/// nlohmann's own serialisation of one value. The strings are clean already; `replace` only
/// keeps a slip of the sanitiser from throwing away the whole report.
std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

/// An object on one line, `{"key": value, ...}`, each key and value as nlohmann writes it.
std::string one_line(const Json& object) {
  std::string o = "{";
  for (const auto& f : object.items()) o += (o.size() > 1 ? ", " : "") + dump(f.key()) + ": " + dump(f.value());
  return o + "}";
}

/// The layout docs/report-format.md shows: the report's fields a line each, then each lab, with
/// each metric and each check on one line of its own, so that a report reads (and diffs) a check
/// a line. The punctuation is the only thing written here; tests parse the result back.
std::string layout(const Json& report) {
  std::string o = "{";
  for (const auto& field : report.items()) {
    o += (o.size() > 1 ? ",\n  " : "\n  ") + dump(field.key()) + ": ";
    if (field.key() != "labs") {
      o += dump(field.value());
      continue;
    }
    o += "[";
    for (std::size_t l = 0; l < field.value().size(); ++l) {
      o += l ? ",\n    {" : "\n    {";
      bool first = true;
      for (const auto& f : field.value()[l].items()) {
        const bool own_line = f.value().is_structured();  // info, metrics, checks
        o += std::string(first ? "" : ",") + (own_line ? "\n     " : first ? "" : " ") + dump(f.key()) + ": ";
        first = false;
        if (f.value().is_object()) {
          o += one_line(f.value());
        } else if (f.value().is_array()) {
          o += "[";
          for (std::size_t i = 0; i < f.value().size(); ++i)
            o += (i ? ",\n       " : "\n       ") + one_line(f.value()[i]);
          o += "]";
        } else {
          o += dump(f.value());
        }
      }
      o += "}";
    }
    o += "\n  ]";
  }
  return o + "\n}\n";
}

}  // namespace

std::string json_report(const Report& r) {
  double score = 0, max = 0;
  for (const auto& l : r.labs) {
    score += l.score;
    max += l.max_score;
  }
  Json j = {{"backend", text(r.backend)},
            {"device", text(r.device)},
            {"seed", text(r.seed)},
            {"complete", r.complete},
            {"passed", r.complete && r.passed()},
            {"score", points(score)},
            {"max_score", points(max)},
            {"labs", Json::array()}};
  for (const auto& l : r.labs) j["labs"].push_back(lab_json(l));
  return layout(j);
}

Report report_from_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);  // throws on malformed text
  auto str = [](const nlohmann::json& o, const char* key) -> std::string {
    if (!o.contains(key) || o[key].is_null()) return "";
    return o[key].is_string() ? o[key].get<std::string>() : o[key].dump();  // numbers as written
  };
  Report r;
  r.backend = str(j, "backend");
  r.device = str(j, "device");
  r.seed = str(j, "seed");
  r.complete = j.value("complete", false);
  for (const auto& lj : j.value("labs", nlohmann::json::array())) {
    LabResult l;
    l.lab = str(lj, "lab");
    l.impl = str(lj, "impl");
    l.source = str(lj, "source");
    l.isolation = str(lj, "isolation");
    l.graded = lj.value("status", "graded") == "graded";
    l.passed = lj.value("passed", false);
    l.score = lj.value("score", 0.0);
    l.max_score = lj.value("max_score", 0.0);
    const nlohmann::json info = lj.value("info", nlohmann::json::object());
    const nlohmann::json seconds = lj.value("seconds", nlohmann::json::object());
    for (const auto& [key, value] : info.items())
      l.info[key] = value.is_string() ? value.get<std::string>() : value.dump();
    for (const auto& m : lj.value("metrics", nlohmann::json::array())) {
      std::vector<std::string> row;
      for (const char* key : {"check", "launch", "line", "space", "access", "requests", "per_request",
                              "ideal_per_request", "efficiency", "lane_stride_bytes"})
        row.push_back(str(m, key));
      l.metrics.push_back(row);
    }
    for (const auto& cj : lj.value("checks", nlohmann::json::array()))
      l.checks.push_back(Check{str(cj, "name"), str(cj, "kind"), cj.value("passed", false), str(cj, "value"),
                               str(cj, "threshold"), str(cj, "unit"), str(cj, "message"), cj.value("points", 0.0),
                               cj.value("max_points", 0.0)});
    for (const auto& [phase, s] : seconds.items())
      if (s.is_number()) l.seconds[phase] = s.get<double>();
    r.labs.push_back(l);
  }
  return r;
}

// ---- JUnit, step summary, console ---------------------------------------------------------------

std::string junit_report(const Report& r) {
  int tests = r.complete ? 0 : 1, failures = tests;
  std::string pending;
  for (const auto& l : r.labs) {
    if (!l.graded) pending += (pending.empty() ? "" : ", ") + l.lab;
    for (const auto& c : l.checks) {
      tests += l.graded;
      failures += l.graded && !c.passed;
    }
  }
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gpulab\" tests=\"" << tests << "\" failures=\""
    << failures << "\">\n";
  for (const auto& l : r.labs) {
    if (!l.graded) continue;
    int f = 0;
    for (const auto& c : l.checks) f += !c.passed;
    o << "  <testsuite name=\"" << xml_text(l.lab + " (" + l.impl + ", " + r.backend + ")", true) << "\" tests=\""
      << l.checks.size() << "\" failures=\"" << f << "\">\n";
    for (const auto& c : l.checks) {
      o << "    <testcase classname=\"" << xml_text(l.lab + "." + c.kind, true) << "\" name=\""
        << xml_text(c.name, true) << "\"";
      if (c.passed) {
        o << "/>\n";
        continue;
      }
      o << ">\n      <failure message=\"" << xml_text(c.message.substr(0, c.message.find('\n')), true) << "\">"
        << xml_text(c.message) << (c.value.empty() ? "" : "\nvalue: " + xml_text(value_text(c)))
        << "</failure>\n    </testcase>\n";
    }
    o << "  </testsuite>\n";
  }
  // Written before grading starts: a grader that never finishes leaves a failing report.
  if (!r.complete)
    o << "  <testsuite name=\"gpulab\" tests=\"1\" failures=\"1\">\n"
         "    <testcase classname=\"gpulab\" name=\"grading incomplete\">\n"
         "      <failure message=\"grading incomplete: the grader stopped before it finished\">not graded: "
      << xml_text(pending) << "</failure>\n    </testcase>\n  </testsuite>\n";
  o << "</testsuites>\n";
  return o.str();
}

std::string github_summary(const Report& r) {
  // One table cell: one line, and no | (a column break) or < > (HTML) of its own.
  const auto cell = [](const std::string& s) {
    std::string o;
    for (char c : console_text(s, true, 512))
      o += c == '|' ? "\\|" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : std::string(1, c);
    return o;
  };
  std::ostringstream o;
  o << "## gpulab grade (" << cell(r.backend) << ", " << cell(r.device) << ", seed " << cell(r.seed) << ")\n\n";
  o << "| lab | check | result | value | points |\n|---|---|---|---|---|\n";
  for (const auto& l : r.labs)
    for (const auto& c : l.checks)
      o << "| " << cell(l.lab) << " | " << cell(c.name) << " | " << (c.passed ? "pass" : "**fail**") << " | "
        << cell(value_text(c)) << " | " << fmt(c.points) << "/" << fmt(c.max_points) << " |\n";
  o << "\n";
  return o.str();
}

void print_table(const Report& r, bool colour) {
  const char* green = colour ? "\033[32m" : "";
  const char* red = colour ? "\033[31m" : "";
  const char* bold = colour ? "\033[1m" : "";
  const char* reset = colour ? "\033[0m" : "";
  const auto line = [](const std::string& s) { return console_text(s, true); };
  std::printf("\n%sgpulab grade%s  back-end %s (%s), seed %s (reproduce with --seed %s)\n", bold, reset,
              line(r.backend).c_str(), line(r.device).c_str(), line(r.seed).c_str(), line(r.seed).c_str());
  double score = 0, max = 0;
  for (const auto& lab : r.labs) {
    std::printf("\n%s%s%s  [%s: %s]  %s / %s points  %s%s%s\n", bold, line(lab.lab).c_str(), reset,
                line(lab.impl).c_str(), line(lab.source).c_str(), fmt(lab.score).c_str(), fmt(lab.max_score).c_str(),
                lab.passed ? green : red,
                !lab.graded  ? "NOT GRADED"
                : lab.passed ? "PASSED"
                             : "FAILED",
                reset);
    for (const auto& c : lab.checks) {
      std::printf("  %s%s%s  %-52s %-34s %s/%s\n", c.passed ? green : red, c.passed ? "pass" : "FAIL", reset,
                  line(c.name).c_str(), line(value_text(c)).c_str(), fmt(c.points).c_str(), fmt(c.max_points).c_str());
      // Each line of a message is indented under its check: output of the code under test
      // cannot start a line of the table.
      if (!c.message.empty() && (!c.passed || is(c, CheckKind::performance))) {
        std::istringstream in(console_text(c.message, false));
        for (std::string text; std::getline(in, text);) std::printf("        %s\n", text.c_str());
      }
    }
    score += lab.score;
    max += lab.max_score;
  }
  const bool passed = r.complete && r.passed();
  std::printf("\n%sTotal: %s / %s points — %s%s%s\n", bold, fmt(score).c_str(), fmt(max).c_str(), passed ? green : red,
              !r.complete ? "grading incomplete"
              : passed    ? "all graded labs passed"
                          : "not all checks passed",
              reset);
}

}  // namespace gpulab::grade
