// Lab 05 checks: the four functions of particle_reorder.hpp, each on inputs the grader computed
// itself (correctness: keys and cell starts exact, the sorted index a permutation grouped by key,
// the reordered state bit for bit, densities against a double-precision sum), free of memory bugs
// (sanitizer), and fast (performance: on the emulator the memory traffic of the density loop, of
// the reorder's stores and of the sort's scan; on a GPU the density kernel against the grader's
// kernel that reads through the sorted index, the reorder against a copy, and the whole frame
// against the same frame sorted by CUB).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/grade/compare.hpp"
#include "gpulab/grade/defences.hpp"
#include "gpulab/grade/harness.hpp"
#include "gpulab/grade/inputs.hpp"
#include "gpulab/grade/kit.hpp"
#include "gpulab/grade/timing.hpp"
#include "gpulab/host.hpp"
#include "particle_reorder.hpp"
#include "reference.hpp"

/// The grader's density kernel that reads through the sorted index (indirect_baseline.cu).
void lab05_indirect_density(const float4* position, const int* sorted_index, const unsigned* cell_start, int n,
                            Grid grid, CellOrder order, float* density);

namespace {
using namespace gpulab;
using namespace gpulab::grade;
using namespace lab05;

std::string at(int n, CellOrder order) {
  return "(n = " + std::to_string(n) + ", " + (order == CellOrder::linear ? "linear" : "Morton") + " order)";
}

// ---- one call per function, through the kit -----------------------------------------------------

std::vector<unsigned> run_cells(kit::Call& call, const Problem& p, CellOrder order) {
  const float4* d_pos = call.input(p.position, "position", false);  // w (mass) is not needed
  unsigned* d_cell = call.output<unsigned>(p.position.size(), "cell");
  if (!call.run([&] { compute_cells(d_pos, p.n(), p.grid, order, d_cell); })) return {};
  return call.result(d_cell);
}

struct SortResult {
  std::vector<unsigned> cell_start;
  std::vector<int> sorted_index, rank;
};

bool run_sort(kit::Call& call, const std::vector<unsigned>& cell, int keys, SortResult& out) {
  const int n = static_cast<int>(cell.size());
  const unsigned* d_cell = call.input(cell, "cell");
  unsigned* d_start = call.output<unsigned>(static_cast<std::size_t>(keys) + 1, "cell_start");
  int* d_sorted = call.output<int>(cell.size(), "sorted_index");
  int* d_rank = call.output<int>(cell.size(), "rank");
  unsigned* d_scratch = call.output<unsigned>(static_cast<std::size_t>(sort_scratch_elements(keys)), "scratch");
  if (!call.run([&] { sort_by_cell(d_cell, n, keys, d_start, d_sorted, d_rank, d_scratch); })) return false;
  out.cell_start = call.result(d_start);
  out.sorted_index = call.result(d_sorted);
  out.rank = call.result(d_rank);
  return true;
}

bool run_reorder(kit::Call& call, const Problem& p, const Sorted& s, std::vector<float4>& pos, std::vector<float4>& vel) {
  const int n = p.n();
  const int* d_index = call.input(s.sorted_index, "sorted_index", false);  // gather or scatter: one of the two
  const int* d_rank = call.input(s.rank, "rank", false);
  const float4* d_pos = call.input(p.position, "position");
  const float4* d_vel = call.input(p.velocity, "velocity");
  float4* d_spos = call.output<float4>(p.position.size(), "sorted_position");
  float4* d_svel = call.output<float4>(p.velocity.size(), "sorted_velocity");
  if (!call.run([&] { reorder_state(d_index, d_rank, n, d_pos, d_vel, d_spos, d_svel); })) return false;
  pos = call.result(d_spos);
  vel = call.result(d_svel);
  return true;
}

std::vector<float> run_density(kit::Call& call, const Problem& p, const Sorted& s, CellOrder order) {
  // Both copies of the state are offered; an implementation reads one of them (must_read off).
  const float4* d_pos = call.input(p.position, "position", false);
  const int* d_index = call.input(s.sorted_index, "sorted_index", false);
  const float4* d_spos = call.input(s.sorted_position, "sorted_position", false);
  const unsigned* d_start = call.input(s.cell_start, "cell_start", false);
  float* d_density = call.output<float>(p.position.size(), "density");
  if (!call.run([&] { sph_density(d_pos, d_index, d_spos, d_start, p.n(), p.grid, order, d_density); })) return {};
  return call.result(d_density);
}

// ---- judging --------------------------------------------------------------------------------------

/// `crafted`: what the inputs were crafted to test (crafted_problem), said with the failure.
bool judge_cells(const std::vector<unsigned>& got, const Problem& p, CellOrder order, const std::string& crafted = "") {
  const std::vector<unsigned> want = cell_keys(p, order);
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i] && bad++ == 0) first = i;
  record_sum(static_cast<double>(bad), 0, "wrong keys");
  if (bad == 0) return true;
  const float4 q = p.position[first];
  ADD_FAILURE() << bad << " of " << want.size() << " keys are wrong " << at(p.n(), order) << "; first: cell[" << first
                << "] = " << got[first] << ", expected " << want[first] << " for the particle at (" << std::setprecision(9)
                << q.x << ", " << q.y << ", " << q.z << ") in a " << p.grid.gx << "x" << p.grid.gy << "x" << p.grid.gz
                << " grid, h = " << p.grid.h << describe_key(p, order, first)
                << "\n  hint: cx = min((int)(x * inv_h), gx - 1) in float (a particle on the far wall belongs to the"
                   " last cell); Morton puts bit b of cx at bit 3b, of cy at 3b+1, of cz at 3b+2"
                   " (particle_reorder.hpp, CellOrder)"
                << (crafted.empty() ? "" : "\n  the inputs: " + crafted);
  return false;
}

bool judge_sort_call(const SortResult& got, const std::vector<unsigned>& cell, int keys, const std::string& what) {
  const int n = static_cast<int>(cell.size());
  const std::vector<unsigned> want = counting_starts(cell, keys);
  for (int c = 0; c <= keys; ++c)
    if (got.cell_start[c] != want[c]) {
      long long diff = static_cast<long long>(got.cell_start[c]) - want[c];
      ADD_FAILURE() << what << ": cell_start[" << c << "] = " << got.cell_start[c] << ", expected " << want[c]
                    << " (the number of particles with a key below " << c << "; cell_start[" << keys << "] = n = " << n
                    << ")" << start_hint(got.cell_start, want, c, diff);
      return false;
    }
  std::vector<char> seen(static_cast<std::size_t>(n), 0);
  for (int k = 0; k < n; ++k) {
    const int i = got.sorted_index[k];
    if (i < 0 || i >= n || seen[i]++) {
      ADD_FAILURE() << what << ": sorted_index[" << k << "] = " << i
                    << (i < 0 || i >= n ? " is not a particle (0 .. n-1)" : ", which appears twice")
                    << ": sorted_index must be a permutation of 0 .. n-1"
                    << "\n  hint: each particle takes its slot with an atomic on its key's cursor (a plain"
                       " read-increment-write loses slots when two threads of one key race)";
      return false;
    }
    if (static_cast<unsigned>(k) < want[cell[i]] || static_cast<unsigned>(k) >= want[cell[i] + 1]) {
      ADD_FAILURE() << what << ": sorted_index[" << k << "] = particle " << i << " of key " << cell[i]
                    << ", whose particles belong at positions " << want[cell[i]] << " .. " << want[cell[i] + 1] - 1
                    << ": the sorted order must group the particles by key, keys in increasing order";
      return false;
    }
    if (got.rank[i] != k) {
      ADD_FAILURE() << what << ": rank[" << i << "] = " << got.rank[i] << ", expected " << k
                    << " (sorted_index[" << k << "] = " << i << ": rank is the inverse permutation)";
      return false;
    }
  }
  return true;
}

/// sort_by_cell's outputs against the counting sort's: the first difference fails the check; each
/// call counts in the check's value (wrong calls).
bool judge_sort(const SortResult& got, const std::vector<unsigned>& cell, int keys, const std::string& what) {
  const bool ok = judge_sort_call(got, cell, keys, what);
  record_sum(ok ? 0 : 1, 0, "wrong calls");
  return ok;
}

bool judge_state_call(const std::vector<float4>& got, const std::vector<float4>& src, const std::vector<int>& order,
                      const std::string& what, const char* name);

/// A gathered state array, bit for bit; each call counts in the check's value (wrong calls).
bool judge_state(const std::vector<float4>& got, const std::vector<float4>& src, const std::vector<int>& order,
                 const std::string& what, const char* name) {
  const bool ok = judge_state_call(got, src, order, what, name);
  record_sum(ok ? 0 : 1, 0, "wrong calls");
  return ok;
}

bool judge_state_call(const std::vector<float4>& got, const std::vector<float4>& src, const std::vector<int>& order,
                      const std::string& what, const char* name) {
  for (std::size_t k = 0; k < order.size(); ++k)
    if (std::memcmp(&got[k], &src[order[k]], sizeof(float4)) != 0) {
      ADD_FAILURE() << what << ": " << name << "[" << k << "] = (" << got[k].x << ", " << got[k].y << ", " << got[k].z
                    << ", " << got[k].w << "), expected the particle sorted_index[" << k << "] = " << order[k] << ": ("
                    << src[order[k]].x << ", " << src[order[k]].y << ", " << src[order[k]].z << ", " << src[order[k]].w
                    << "), bit for bit\n  hint: gather: sorted[k] = state[sorted_index[k]] for every k < n, all four"
                       " components";
      return false;
    }
  return true;
}

bool judge_density(const std::vector<float>& got, const Problem& p, const Sorted& s, CellOrder order,
                   const std::string& when) {
  const DensityReference ref = density_reference(p, s);
  const Comparison c = compare_all(got, ref.value, ref.tolerance, [&](std::size_t k) {
    return "density[" + std::to_string(k) + "] (particle " + std::to_string(s.sorted_index[k]) + ", " +
           std::to_string(ref.neighbours[k]) + " neighbours within h)";
  });
  record_max(c.worst_ratio, 1.0, "error/tolerance");
  if (c.ok) return true;
  ADD_FAILURE() << c.bad << " of " << got.size() << " densities are wrong " << when << at(p.n(), order)
                << "; first: " << c.first_message << density_hint(got, ref, c.first_bad);
  return false;
}

// ---- the checks' bodies --------------------------------------------------------------------------

/// compute_cells on the crafted positions (crafted_problem): the contract's rounding rule on every
/// axis, every run. Defence `crafted-inputs` (judge): not judged when switched off.
void check_crafted_cells(CellOrder order) {
  const CraftedProblem crafted = crafted_problem(rng());
  kit::Call call("compute_cells" + at(crafted.problem.n(), order) + ", crafted positions");
  const std::vector<unsigned> got = run_cells(call, crafted.problem, order);
  if (!got.empty() && defence_enabled("crafted-inputs")) judge_cells(got, crafted.problem, order, crafted.description);
}

void check_cells(int n, CellOrder order) {
  const Problem p = make_problem(n, rng());
  kit::Call call("compute_cells" + at(n, order));
  const std::vector<unsigned> got = run_cells(call, p, order);
  if (!got.empty()) judge_cells(got, p, order);
}

void check_sort(int n, CellOrder order) {
  const Problem p = make_problem(n, rng());
  const std::vector<unsigned> cell = cell_keys(p, order);
  kit::Call call("sort_by_cell" + at(n, order));
  SortResult got;
  if (run_sort(call, cell, num_keys(p.grid, order), got)) judge_sort(got, cell, num_keys(p.grid, order), call.what());
}

void check_reorder(int n) {
  const Problem p = make_problem(n, rng());
  const Sorted s = sorted_state(p, CellOrder::linear, rng());
  kit::Call call("reorder_state(n = " + std::to_string(n) + ")");
  std::vector<float4> pos, vel;
  if (!run_reorder(call, p, s, pos, vel)) return;
  if (judge_state(pos, p.position, s.sorted_index, call.what(), "sorted_position"))
    judge_state(vel, p.velocity, s.sorted_index, call.what(), "sorted_velocity");
}

void check_density(int n, CellOrder order) {
  const Problem p = make_problem(n, rng());
  const Sorted s = sorted_state(p, order, rng());
  kit::Call call("sph_density" + at(n, order));
  const std::vector<float> got = run_density(call, p, s, order);
  if (!got.empty()) judge_density(got, p, s, order, "");
}

int random_size(int lo, int hi) {
  auto gen = rng();
  return std::uniform_int_distribution<int>(lo, hi)(gen);
}

/// The frame's four functions on two problems of n particles (the same grid size, so the same
/// buffer sizes) through the same device buffers (kit::check_interleaved_calls), each on A, B, A
/// before the next, each on the grader's own inputs as in the other checks: a function that reads
/// anything but its arguments (keys or a sorted copy an earlier call kept, a memo by pointer)
/// returns the other problem's results.
std::vector<kit::InterleavedStep> frame_steps(int n, CellOrder order) {
  struct Set {
    Problem problem;
    Sorted sorted;
  };
  auto sets = std::make_shared<std::vector<Set>>();
  for (int k = 0; k < 2; ++k) {
    Problem p = make_problem(n, kit::generator(k + 1), k ? &(*sets)[0].problem.grid : nullptr);
    Sorted sorted = sorted_state(p, order, kit::generator(k + 3));
    sets->push_back({std::move(p), std::move(sorted)});
  }
  auto name = [n, order](const std::string& f, int set) {
    std::string where = at(n, order);
    return f + where.insert(where.size() - 1, ", " + kit::data_set_name(set));
  };
  return {
      {"compute_cells",
       [=](int set, kit::Slots& slots) {
         kit::Call call(name("compute_cells", set), slots);
         const std::vector<unsigned> got = run_cells(call, (*sets)[set].problem, order);
         return !got.empty() && judge_cells(got, (*sets)[set].problem, order);
       }},
      {"sort_by_cell",
       [=](int set, kit::Slots& slots) {
         const Set& s = (*sets)[set];
         const int keys = num_keys(s.problem.grid, order);
         kit::Call call(name("sort_by_cell", set), slots);
         SortResult got;
         return run_sort(call, s.sorted.cell, keys, got) && judge_sort(got, s.sorted.cell, keys, call.what());
       }},
      {"reorder_state",
       [=](int set, kit::Slots& slots) {
         const Set& s = (*sets)[set];
         kit::Call call(name("reorder_state", set), slots);
         std::vector<float4> pos, vel;
         return run_reorder(call, s.problem, s.sorted, pos, vel) &&
                judge_state(pos, s.problem.position, s.sorted.sorted_index, call.what(), "sorted_position") &&
                judge_state(vel, s.problem.velocity, s.sorted.sorted_index, call.what(), "sorted_velocity");
       }},
      {"sph_density",
       [=](int set, kit::Slots& slots) {
         const Set& s = (*sets)[set];
         kit::Call call(name("sph_density", set), slots);
         const std::vector<float> got = run_density(call, s.problem, s.sorted, order);
         return !got.empty() && judge_density(got, s.problem, s.sorted, order, "(" + kit::data_set_name(set) + ") ");
       }},
  };
}

}  // namespace

TEST(correctness, cell_keys_linear_and_morton) {
  for (CellOrder order : {CellOrder::linear, CellOrder::morton}) {
    check_crafted_cells(order);
    for (int n : {1, 2, 31, 257, 1000, 4099, random_size(5000, 20000)}) check_cells(n, order);
  }
}

TEST(correctness, counting_sort) {
  for (CellOrder order : {CellOrder::linear, CellOrder::morton})
    for (int n : {1, 3, 33, 255, 1000, 4099, random_size(2000, 5000)}) check_sort(n, order);
}

// Many keys: the scan of the cell counters spans many blocks (Morton: 2^15 keys, mostly empty).
TEST(correctness, counting_sort_large) { check_sort(131071, CellOrder::morton); check_sort(100003, CellOrder::linear); }

TEST(correctness, gather_reorder) {
  for (int n : {1, 2, 33, 257, 1000, random_size(2000, 5000), 131071}) check_reorder(n);
}

TEST(correctness, density_27_cells) {
  for (CellOrder order : {CellOrder::linear, CellOrder::morton})
    for (int n : {1, 2, 7, 257, 1000, random_size(2000, 4100)}) check_density(n, order);
}

TEST(correctness, interleaved_calls) {
  kit::check_interleaved_calls(frame_steps(random_size(800, 1500), CellOrder::linear));
}

// The emulator's findings over the whole frame, or on a GPU those of its sanitizer.
TEST(sanitizer, no_memory_errors_or_races) {
  std::vector<std::unique_ptr<kit::Call>> calls;
  auto next = [&](const std::string& what) { return calls.emplace_back(std::make_unique<kit::Call>(what, false)).get(); };
  for (int n : {1, 257, 1000}) {
    const Problem p = make_problem(n, rng());
    const CellOrder order = n == 257 ? CellOrder::morton : CellOrder::linear;
    run_cells(*next("compute_cells" + at(n, order)), p, order);
    SortResult sorted;
    run_sort(*next("sort_by_cell" + at(n, order)), cell_keys(p, order), num_keys(p.grid, order), sorted);
    const Sorted s = sorted_state(p, order, rng());
    std::vector<float4> pos, vel;
    run_reorder(*next("reorder_state" + at(n, order)), p, s, pos, vel);
    run_density(*next("sph_density" + at(n, order)), p, s, order);
  }
  std::vector<const kit::Call*> all;
  for (const auto& c : calls) all.push_back(c.get());
  kit::judge_findings(all);
}

#if defined(GPULAB_BUILD_BACKEND_EMU)
#include "emu_performance.inc"
#else
#include "gpu_performance.inc"
#endif
