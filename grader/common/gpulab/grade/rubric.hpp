// gpulab/grade/rubric.hpp - a lab's rubric: checks' points and thresholds per back-end.
//
// The file is INI-like, one per lab (grader/labs/NN-name/rubric.ini):
//
//   [lab]
//   title = Memory coalescing: row sums
//   timeout_seconds = 120
//   [points]                      ; points of each kind of check, shared by its checks
//   correctness = 6
//   [performance.cuda]            ; thresholds the lab's checks read, per back-end
//   min_fraction_of_copy = 0.6
//
// Instructors calibrate the thresholds for their GPUs with `./gpulab calibrate`.
#pragma once

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpulab::grade {

class Rubric {
 public:
  Rubric() = default;

  static Rubric load(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read rubric " + path);
    Rubric r;
    r.path_ = path;
    std::string line, section;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      const auto semi = line.find_first_of(";#");
      if (semi != std::string::npos) line.erase(semi);
      line = trim(line);
      if (line.empty()) continue;
      if (line.front() == '[') {
        if (line.back() != ']')
          throw std::runtime_error(path + ":" + std::to_string(number) + ": unterminated [section]");
        section = trim(line.substr(1, line.size() - 2));
        continue;
      }
      const auto eq = line.find('=');
      if (eq == std::string::npos)
        throw std::runtime_error(path + ":" + std::to_string(number) + ": expected key = value");
      r.values_[section + "." + trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
    }
    return r;
  }

  const std::string& path() const { return path_; }

  std::optional<std::string> text(const std::string& section, const std::string& key) const {
    auto it = values_.find(section + "." + key);
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }
  std::string text_or(const std::string& section, const std::string& key, const std::string& d) const {
    return text(section, key).value_or(d);
  }
  /// A number; throws naming the rubric file when it is missing or malformed.
  double number(const std::string& section, const std::string& key) const {
    const auto t = text(section, key);
    if (!t) throw std::runtime_error(path_ + ": missing [" + section + "] " + key);
    char* end = nullptr;
    const double v = std::strtod(t->c_str(), &end);
    if (end == t->c_str() || *end != '\0')
      throw std::runtime_error(path_ + ": [" + section + "] " + key + " = '" + *t + "' is not a number");
    return v;
  }
  double number_or(const std::string& section, const std::string& key, double d) const {
    return text(section, key) ? number(section, key) : d;
  }
  /// A comma-separated list of numbers.
  std::vector<double> numbers(const std::string& section, const std::string& key) const {
    std::vector<double> out;
    std::stringstream ss(text_or(section, key, ""));
    std::string item;
    while (std::getline(ss, item, ','))
      if (!trim(item).empty()) out.push_back(std::strtod(trim(item).c_str(), nullptr));
    return out;
  }
  /// Every key of a section, in order.
  std::map<std::string, std::string> section(const std::string& name) const {
    std::map<std::string, std::string> out;
    const std::string prefix = name + ".";
    for (const auto& [k, v] : values_)
      if (k.compare(0, prefix.size(), prefix) == 0) out[k.substr(prefix.size())] = v;
    return out;
  }

 private:
  static std::string trim(const std::string& s) {
    const auto a = s.find_first_not_of(" \t\r\n");
    if (a == std::string::npos) return {};
    const auto b = s.find_last_not_of(" \t\r\n");
    return s.substr(a, b - a + 1);
  }
  std::string path_;
  std::map<std::string, std::string> values_;
};

}  // namespace gpulab::grade
