// The report of a grading run: console table, JSON, JUnit XML, GitHub step summary.
#pragma once

#include <string>

#include "model.hpp"

namespace gpulab::grade {

void print_table(const Report& report, bool colour);
void write_json(const Report& report, const std::string& path);
void write_junit(const Report& report, const std::string& path);
void append_github_summary(const Report& report, const std::string& path);

}  // namespace gpulab::grade
