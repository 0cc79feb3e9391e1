// The GPU's own sanitizer for the sanitizer checks of a GPU grade: compute-sanitizer on cuda
// (memcheck, racecheck, synccheck, initcheck), run by the grader around the lab process, its
// report translated into the grader's findings (kind, message with file:line, block, thread).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpulab::grade {

/// compute-sanitizer's path ("" when there is none): PATH, then beside nvcc, then /usr/local/cuda.
std::string find_compute_sanitizer();

/// The tools run, in order.
const std::vector<std::string>& compute_sanitizer_tools();

/// compute-sanitizer's text report of one tool, as findings: [{kind, message, count}], identical
/// ones collapsed. A report that says errors were found but cannot be read line by line still
/// gives one finding (its first lines), never none.
nlohmann::json parse_compute_sanitizer(const std::string& tool, const std::string& output);

}  // namespace gpulab::grade
