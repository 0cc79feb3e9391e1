// The report of a grading run: console table, JSON, JUnit XML, GitHub step summary.
//
// Every string a report shows or writes goes through sanitise.hpp first (it may come from the
// code under test), and report files are written only by the grader, atomically, and never
// through a symbolic link, into a FIFO or onto a device.
#pragma once

#include <stdexcept>
#include <string>

#include "model.hpp"
#include "sanitise.hpp"  // clean_text, console_text, xml_text

namespace gpulab::grade {

/// A report could not be written; what() says why ("it is a symbolic link", ...).
struct ReportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Replaces `path` by a file holding `content`: written to a new file (O_CREAT|O_EXCL|
/// O_NOFOLLOW) in the same directory, flushed to disk, renamed over `path`; a reader sees the old
/// file or the new one, never a part. Refuses a `path` that is a symbolic link, a directory, a
/// FIFO, a socket or a device (never opening it). Throws ReportError.
void write_file_atomically(const std::string& path, const std::string& content);
/// Appends to a regular file (created when missing), with the same refusals. Throws ReportError.
void append_to_file(const std::string& path, const std::string& content);

/// The reports as text (schema and layout: docs/report-format.md).
std::string json_report(const Report& report);
std::string junit_report(const Report& report);
std::string github_summary(const Report& report);
/// A page to look at (html_report.cpp): the checks, and the graded source with each line's
/// emulator metrics as a heat map and the lines failing checks name; one file, opens offline.
std::string html_report(const Report& report);

/// A JSON report read back (docs/report-format.md), for pages made from a report written
/// elsewhere (`gpulab report`: a CI's or a GPU machine's). Throws on text that is not one.
Report report_from_json(const std::string& text);

void print_table(const Report& report, bool colour);
/// These throw ReportError when the file cannot be written.
void write_json(const Report& report, const std::string& path);
void write_junit(const Report& report, const std::string& path);
void append_github_summary(const Report& report, const std::string& path);
void write_html(const Report& report, const std::string& path);

}  // namespace gpulab::grade
