// gpulab/grade/compare.hpp - comparing results with tolerances from error analysis.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace gpulab::grade {

/// Unit roundoff of float (2^-24).
inline constexpr double kFloatUnitRoundoff = 5.9604644775390625e-08;

/// gamma_k = k u / (1 - k u): the bound on the relative error of a k-term float sum (or dot
/// product) in any order, relative to the sum of the absolute values (Higham, "Accuracy and
/// Stability of Numerical Algorithms", 2nd ed., section 3.1).
inline double gamma_bound(double k) {
  const double ku = k * kFloatUnitRoundoff;
  return ku < 1 ? ku / (1 - ku) : std::numeric_limits<double>::infinity();
}

/// Result of comparing a float vector with a reference.
struct Comparison {
  bool ok = true;
  std::size_t checked = 0;
  std::size_t bad = 0;
  std::size_t first_bad = 0;
  double worst_ratio = 0;  ///< max |got - ref| / tolerance (<= 1 passes)
  std::string first_message;
};

/// Compares every element: |got[i] - ref[i]| <= tol[i]. NaN or Inf in `got` never passes.
/// `what(i)` names element i for the message ("sums[17] (row 17)").
template <class Name>
Comparison compare_all(const std::vector<float>& got, const std::vector<double>& ref,
                       const std::vector<double>& tol, Name what) {
  Comparison c;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ++c.checked;
    const double g = got[i];
    const double err = std::fabs(g - ref[i]);
    const bool finite = std::isfinite(g);
    const double ratio = finite ? (tol[i] > 0 ? err / tol[i] : (err > 0 ? INFINITY : 0)) : INFINITY;
    if (finite && ratio > c.worst_ratio) c.worst_ratio = ratio;
    if (!finite || err > tol[i]) {
      if (c.bad++ == 0) {
        c.first_bad = i;
        std::ostringstream os;
        os.precision(9);
        os << what(i) << " = " << g << ", expected " << ref[i];
        if (std::isnan(g)) os << " (NaN: never written, or computed from unwritten memory)";
        else if (!finite) os << " (infinite)";
        else os << " (error " << err << " > tolerance " << tol[i] << ")";
        c.first_message = os.str();
      }
      if (!finite) c.worst_ratio = INFINITY;
    }
  }
  c.ok = c.bad == 0;
  return c;
}

}  // namespace gpulab::grade
