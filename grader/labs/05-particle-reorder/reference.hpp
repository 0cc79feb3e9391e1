// Lab 05: the grader's host reference: the particles of a check, their keys, the counting sort,
// the reordered state, and the densities in double precision with their error bounds.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/grade/compare.hpp"
#include "gpulab/grade/inputs.hpp"
#include "particle_reorder.hpp"

namespace lab05 {

/// Particles per h^3 so that a sphere of radius h holds about 84 of them: 84 / (4 pi / 3).
constexpr double kParticlesPerCell = 84.0 / (4.0 * 3.14159265358979323846 / 3.0);

struct Problem {
  Grid grid{};
  std::vector<float4> position, velocity;
  int n() const { return static_cast<int>(position.size()); }
};

inline float4 make_float4_host(float x, float y, float z, float w) {
  float4 f;
  f.x = x, f.y = y, f.z = z, f.w = w;
  return f;
}

/// n particles spread uniformly over a box of about n / kParticlesPerCell cells, not a cube (so
/// that x, y and z cannot be swapped unnoticed), every 8th particle moved onto a wall or a cell face.
/// `same_grid`: in that grid instead (other particles in the same box, for calls whose grid argument
/// must not change).
inline Problem make_problem(int n, std::mt19937_64 gen, const Grid* same_grid = nullptr) {
  auto uniform = [&](double lo, double hi) { return gpulab::grade::kit::UniformReal<double>{lo, hi}(gen); };
  Problem p;
  const float h = static_cast<float>(uniform(0.05, 0.2));
  const double cells = std::max(1.0, n / kParticlesPerCell), side = std::cbrt(cells);
  Grid& g = p.grid;
  g.gx = std::max(1, static_cast<int>(std::lround(side * 1.25)));
  g.gy = std::max(1, static_cast<int>(std::lround(side)));
  g.gz = std::max(1, static_cast<int>(std::lround(cells / (double(g.gx) * g.gy))));
  g.h = h;
  g.inv_h = 1.0f / h;
  g.poly6 = static_cast<float>(315.0 / (64.0 * 3.14159265358979323846 * std::pow(double(h), 9)));
  if (same_grid) g = *same_grid;
  const float wall[3] = {float(g.gx) * g.h, float(g.gy) * g.h, float(g.gz) * g.h};
  const int dims[3] = {g.gx, g.gy, g.gz};
  p.position.resize(static_cast<std::size_t>(n));
  p.velocity.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    float c[3];
    for (int a = 0; a < 3; ++a) c[a] = std::min(wall[a], static_cast<float>(uniform(0, wall[a])));
    if (i % 8 == 3) {  // on a wall (0 or the far one) or on a cell face c*h
      const int a = static_cast<int>(gen() % 3), pick = static_cast<int>(gen() % 3);
      c[a] = pick == 0 ? 0.0f : pick == 1 ? wall[a] : float(static_cast<int>(gen() % dims[a])) * g.h;
    }
    p.position[i] = make_float4_host(c[0], c[1], c[2], static_cast<float>(uniform(0.5, 1.5)));
    p.velocity[i] = make_float4_host(static_cast<float>(uniform(-1, 1)), static_cast<float>(uniform(-1, 1)),
                                     static_cast<float>(uniform(-1, 1)), static_cast<float>(uniform(-1, 1)));
  }
  return p;
}

inline int coordinate(float x, float inv_h, int cells) {
  const int c = static_cast<int>(x * inv_h);  // one float product, as the contract says
  return std::min(c, cells - 1);
}

/// Positions crafted against the contract's rounding rule (cx = min((int)(x * inv_h), gx - 1) in
/// float), so that every run tests it, whatever the seed: random positions meet a face only by luck.
struct CraftedProblem {
  Problem problem;
  std::string description;  ///< what was crafted, for the check's message
};

/// Crafted coordinates along one axis of a grid with `cells` cells of side h.
struct CraftedAxis {
  std::vector<float> quotient;  ///< (int)(x * inv_h) != (int)(x / h)
  std::vector<float> exact;     ///< the float product rounds up onto a face the exact product misses
  std::vector<float> faces;     ///< c * h in float, c = 0 .. cells (the last: the far wall)
  bool wall_reaches = false;    ///< the far wall's product reaches `cells`: the clamp is needed there
};

inline CraftedAxis craft_axis(float h, float inv_h, int cells) {
  CraftedAxis a;
  const float wall = float(cells) * h;
  for (int c = 0; c <= cells; ++c) a.faces.push_back(float(c) * h);
  a.wall_reaches = static_cast<int>(wall * inv_h) >= cells;
  for (int c = 1; c <= cells; ++c) {
    float x = float(c) * h;
    for (int d = 0; d < 32; ++d) x = std::nextafter(x, 0.0f);
    // The cells after the clamp: at the far wall both ways may give the last cell.
    auto cell = [cells](double product) { return std::min(static_cast<int>(product), cells - 1); };
    for (int d = -32; d <= 32 && x <= wall; ++d, x = std::nextafter(x, wall + 1.0f)) {
      const int product = cell(x * inv_h);
      if (product != cell(x / h)) a.quotient.push_back(x);
      else if (product != cell(static_cast<double>(x) * inv_h)) a.exact.push_back(x);  // exact in double
    }
  }
  return a;
}

/// A grid whose h makes every trap of the rule present on every axis (positions where x * inv_h
/// and x / h floor differently, where the float product and the exact one do, a far wall whose
/// product needs the clamp; a few h in a hundred qualify), and particles: those positions on each axis (the other two coordinates random),
/// particles on cell faces on all three axes at once, on the far walls (each axis, and all three),
/// and at the origin.
inline CraftedProblem crafted_problem(std::mt19937_64 gen) {
  auto uniform = [&](double lo, double hi) { return gpulab::grade::kit::UniformReal<double>{lo, hi}(gen); };
  CraftedProblem out;
  Problem& p = out.problem;
  Grid& g = p.grid;
  CraftedAxis axes[3];
  for (int attempt = 0;; ++attempt) {
    g.gx = 3 + static_cast<int>(gen() % 10), g.gy = 3 + static_cast<int>(gen() % 10), g.gz = 3 + static_cast<int>(gen() % 10);
    g.h = static_cast<float>(uniform(0.05, 0.2));
    g.inv_h = 1.0f / g.h;
    const int dims[3] = {g.gx, g.gy, g.gz};
    bool all = true;
    for (int a = 0; a < 3; ++a) {
      axes[a] = craft_axis(g.h, g.inv_h, dims[a]);
      all = all && !axes[a].quotient.empty() && !axes[a].exact.empty() && axes[a].wall_reaches;
    }
    if (all || attempt == 10000) break;
  }
  g.poly6 = static_cast<float>(315.0 / (64.0 * 3.14159265358979323846 * std::pow(double(g.h), 9)));
  auto random_on = [&](int a) { return axes[a].faces[gen() % axes[a].faces.size()]; };
  auto add = [&](float x, float y, float z) {
    p.position.push_back(make_float4_host(x, y, z, static_cast<float>(uniform(0.5, 1.5))));
    p.velocity.push_back(make_float4_host(0.0f, 0.0f, 0.0f, 0.0f));
  };
  auto anywhere = [&](int a) {
    const float wall = axes[a].faces.back();
    return std::min(wall, static_cast<float>(uniform(0, wall)));
  };
  std::size_t quotient = 0, exact = 0;
  for (int a = 0; a < 3; ++a)
    for (const std::vector<float>* list : {&axes[a].quotient, &axes[a].exact})
      for (std::size_t k = 0; k < list->size() && k < 24; ++k) {
        float c[3] = {anywhere(0), anywhere(1), anywhere(2)};
        c[a] = (*list)[k];
        add(c[0], c[1], c[2]);
        (list == &axes[a].quotient ? quotient : exact) += 1;
      }
  for (int k = 0; k < 64; ++k) add(random_on(0), random_on(1), random_on(2));
  for (int mask = 1; mask < 8; ++mask)  // the far wall on x, y, z, each pair and all three
    add(mask & 1 ? axes[0].faces.back() : random_on(0), mask & 2 ? axes[1].faces.back() : random_on(1),
        mask & 4 ? axes[2].faces.back() : random_on(2));
  add(0.0f, 0.0f, 0.0f);
  std::ostringstream os;
  os.precision(9);
  os << "crafted positions (every run; particle_reorder.hpp's rule cx = min((int)(x * inv_h), gx - 1) in float), a "
     << g.gx << "x" << g.gy << "x" << g.gz << " grid, h = " << g.h << ", inv_h = " << g.inv_h << ": " << quotient
     << " particles where (int)(x * inv_h) and (int)(x / h) differ (on each axis), " << exact
     << " where the float product rounds up onto a cell face that the exact product does not reach, 64 on cell faces"
        " on all three axes at once, 7 on the far walls (each axis, each pair, all three: the product reaches gx there,"
        " the clamp gives gx - 1), and one at the origin";
  out.description = os.str();
  return out;
}

inline unsigned spread(unsigned v) {
  unsigned out = 0;
  for (int b = 0; b < 10; ++b) out |= ((v >> b) & 1u) << (3 * b);
  return out;
}

inline unsigned key_of(int cx, int cy, int cz, const Grid& g, CellOrder order) {
  if (order == CellOrder::linear) return static_cast<unsigned>(cx + g.gx * (cy + g.gy * cz));
  return spread(cx) | (spread(cy) << 1) | (spread(cz) << 2);
}

inline void cell_of(const float4& q, const Grid& g, int c[3]) {
  c[0] = coordinate(q.x, g.inv_h, g.gx);
  c[1] = coordinate(q.y, g.inv_h, g.gy);
  c[2] = coordinate(q.z, g.inv_h, g.gz);
}

inline std::vector<unsigned> cell_keys(const Problem& p, CellOrder order) {
  std::vector<unsigned> keys(p.position.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    int c[3];
    cell_of(p.position[i], p.grid, c);
    keys[i] = key_of(c[0], c[1], c[2], p.grid, order);
  }
  return keys;
}

inline std::string describe_key(const Problem& p, CellOrder, std::size_t i) {
  int c[3];
  cell_of(p.position[i], p.grid, c);
  return " (its cell is (" + std::to_string(c[0]) + ", " + std::to_string(c[1]) + ", " + std::to_string(c[2]) + "))";
}

/// cell_start of the contract: exclusive prefix sums of the key counts, num_keys + 1 entries.
inline std::vector<unsigned> counting_starts(const std::vector<unsigned>& cell, int keys) {
  std::vector<unsigned> start(static_cast<std::size_t>(keys) + 1, 0);
  for (unsigned c : cell) ++start[c + 1];
  for (int c = 0; c < keys; ++c) start[c + 1] += start[c];
  return start;
}

inline std::string start_hint(const std::vector<unsigned>& got, const std::vector<unsigned>& want, int c, long long diff) {
  if (c + 1 < static_cast<int>(want.size()) && diff == static_cast<long long>(want[c + 1]) - want[c] && diff != 0)
    return "\n  hint: that is the count of key " + std::to_string(c) +
           " too: an inclusive scan, or the starts used as the scatter's cursors (each atomicAdd moves a start to"
           " the next slot). cell_start[c] counts the keys below c only: an exclusive scan, and a copy of it as"
           " the cursors (README: \"The sort itself\")";
  if (got[c] == 0xFFFFFFFFu) return "\n  hint: this entry was never written (0xFFFFFFFF): all num_keys + 1 entries are outputs";
  return "\n  hint: count the particles of every key with atomics, then an exclusive scan of the counts (README: \"The sort"
         " itself\")";
}

/// The state of a problem sorted by key, within a key in random order: what a correct
/// sort_by_cell may produce, and the inputs of reorder_state and sph_density.
struct Sorted {
  CellOrder order = CellOrder::linear;
  std::vector<unsigned> cell, cell_start;
  std::vector<int> sorted_index, rank;
  std::vector<float4> sorted_position, sorted_velocity;
};

inline Sorted sorted_state(const Problem& p, CellOrder order, std::mt19937_64 gen) {
  Sorted s;
  s.order = order;
  const int n = p.n();
  s.cell = cell_keys(p, order);
  s.cell_start = counting_starts(s.cell, num_keys(p.grid, order));
  std::vector<unsigned> cursor(s.cell_start.begin(), s.cell_start.end() - 1);
  s.sorted_index.resize(n);
  for (int i = 0; i < n; ++i) s.sorted_index[cursor[s.cell[i]]++] = i;
  for (std::size_t c = 0; c + 1 < s.cell_start.size(); ++c)
    std::shuffle(s.sorted_index.begin() + s.cell_start[c], s.sorted_index.begin() + s.cell_start[c + 1], gen);
  s.rank.resize(n);
  s.sorted_position.resize(n);
  s.sorted_velocity.resize(n);
  for (int k = 0; k < n; ++k) {
    const int i = s.sorted_index[k];
    s.rank[i] = k;
    s.sorted_position[k] = p.position[i];
    s.sorted_velocity[k] = p.velocity[i];
  }
  return s;
}

struct DensityReference {
  std::vector<double> value, tolerance;
  std::vector<int> neighbours;   ///< within h, the particle itself included
  std::vector<double> self_term; ///< poly6 * mass * h^6
  std::vector<double> max_term;  ///< the largest neighbour term but the particle's own
};

/// Densities in double, in sorted order, with error bounds for a float evaluation in any order.
///
/// Float error of one term m (h^2 - r^2)^3: r^2 from float differences has a relative error of
/// at most about 5u, h*h and the subtraction add u h^2 each, so a = h^2 - r^2 is off by at most
/// delta = 10 u h^2 (an absolute error: the cancellation near r = h makes it large relative to a);
/// the cube then errs by 3 (a + delta)^2 delta, and the products by 4 u (a + delta)^3. Pairs with
/// a in (-delta, 0] may be counted or not (their terms are at most delta^3). The float sum of K
/// such terms adds gamma_K times their sum (Higham, section 3.1); the final product by poly6 u.
inline DensityReference density_reference(const Problem& p, const Sorted& s) {
  const Grid& g = p.grid;
  const double u = gpulab::grade::kFloatUnitRoundoff, h2 = double(g.h) * g.h, delta = 10 * u * h2;
  const double poly6 = g.poly6;
  const int n = p.n();
  const CellOrder order = s.order;
  DensityReference r;
  r.value.resize(n);
  r.tolerance.resize(n);
  r.neighbours.resize(n);
  r.self_term.resize(n);
  r.max_term.resize(n);
  for (int k = 0; k < n; ++k) {
    const float4 q = s.sorted_position[k];
    int c[3];
    cell_of(q, g, c);
    double sum = 0, bound = 0, magnitude = 0, biggest = 0;
    int counted = 0, within = 0;
    for (int z = c[2] - 1; z <= c[2] + 1; ++z)
      for (int y = c[1] - 1; y <= c[1] + 1; ++y)
        for (int x = c[0] - 1; x <= c[0] + 1; ++x) {
          if (x < 0 || y < 0 || z < 0 || x >= g.gx || y >= g.gy || z >= g.gz) continue;
          const unsigned key = key_of(x, y, z, g, order);
          for (unsigned j = s.cell_start[key]; j < s.cell_start[key + 1]; ++j) {
            const float4 o = s.sorted_position[j];
            const double dx = double(o.x) - q.x, dy = double(o.y) - q.y, dz = double(o.z) - q.z;
            const double a = h2 - (dx * dx + dy * dy + dz * dz);
            if (a <= -delta) continue;
            const double ap = std::max(a, 0.0), m = o.w, term = m * ap * ap * ap;
            sum += term;
            if (a >= 0) ++within;
            if (static_cast<int>(j) != k) biggest = std::max(biggest, term);
            ++counted;
            bound += m * (3 * (ap + delta) * (ap + delta) * delta + 4 * u * std::pow(ap + delta, 3));
            magnitude += m * std::pow(ap + delta, 3);
          }
        }
    r.value[k] = poly6 * sum;
    r.tolerance[k] = 2 * (poly6 * (bound + gpulab::grade::gamma_bound(counted + 1) * magnitude) + 2 * u * r.value[k]);
    r.neighbours[k] = within;
    r.self_term[k] = poly6 * q.w * h2 * h2 * h2;
    r.max_term[k] = poly6 * biggest;
  }
  return r;
}

inline std::string density_hint(const std::vector<float>& got, const DensityReference& ref, std::size_t k) {
  const double g = got[k], want = ref.value[k], tol = ref.tolerance[k];
  if (!std::isfinite(g)) return "";
  if (std::fabs(g - (want - ref.self_term[k])) <= tol)
    return "\n  hint: that is the density without the particle's own term: j = i counts too (mass_i * h^6)";
  if (std::fabs(g - 2 * want) <= 2 * tol) return "\n  hint: twice the density: is every neighbour counted twice?";
  if (g < want)
    return "\n  hint: too small: neighbours were missed. Walk all 27 cells around the particle's cell (the cells at"
           " -1, 0 and +1 along x, y and z, those inside the grid), each from cell_start[key] to cell_start[key + 1]"
           " (README: \"The density loop\")";
  return "\n  hint: too large: particles beyond h were counted, or some twice. A neighbour counts when"
         " r^2 <= h^2 (squared distance against h*h), once (README: \"The density loop\")";
}

}  // namespace lab05
