// Lab 03 checks: the transposes must be exact for every shape (correctness), free of memory bugs
// and races (sanitizer), and on the emulator coalesced on both global sides with no bank conflict
// that would cost time on an H200 (performance: the performance model's shared-memory time against
// the DRAM's); on GPUs, bandwidth against a copy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/grade/defences.hpp"
#include "gpulab/grade/harness.hpp"
#include "gpulab/grade/inputs.hpp"
#include "gpulab/grade/kit.hpp"
#include "gpulab/grade/timing.hpp"
#include "gpulab/host.hpp"
#include "transpose.hpp"

namespace {
using namespace gpulab;
using namespace gpulab::grade;

struct Shape {
  int rows, cols;
};

std::string describe(const Shape& s) { return std::to_string(s.rows) + " x " + std::to_string(s.cols); }

template <class T>
const char* type_name() {
  return sizeof(T) == 4 ? "float" : "double";
}
template <class T>
const char* function_name() {
  return sizeof(T) == 4 ? "transpose" : "transpose_double";
}

// The code under test, by element type.
void call_transpose(const float* in, float* out, int rows, int cols) { transpose(in, out, rows, cols); }
void call_transpose(const double* in, double* out, int rows, int cols) { transpose_double(in, out, rows, cols); }

/// Distinct random values (a transpose moves them; distinct values show where one went wrong).
/// `set` > 0: another stream of the check's generator (rng() starts from the same state at every
/// call of a check, so two matrices of one check must ask for different sets).
template <class T>
std::vector<T> random_matrix(const Shape& s, int set = 0) {
  auto gen = kit::generator(set);
  kit::UniformReal<double> u{-1.0, 1.0};
  std::vector<T> m(static_cast<std::size_t>(s.rows) * s.cols);
  for (T& x : m) x = static_cast<T>(u(gen));
  return m;
}

template <class T>
std::vector<T> run_transpose(kit::Call& call, const std::vector<T>& in, const Shape& s) {
  const T* d_in = call.input(in, "in");
  T* d_out = call.output<T>(in.size(), "out");
  if (!call.run([&] { call_transpose(d_in, d_out, s.rows, s.cols); })) return {};
  return call.result(d_out);
}

/// A transpose moves values without arithmetic: every element must be bit-identical to its source.
/// Returns true when all are.
template <class T>
bool judge_transpose(const std::vector<T>& got, const std::vector<T>& in, const Shape& s, const std::string& when) {
  const std::string what = std::string(function_name<T>()) + "(rows = " + std::to_string(s.rows) +
                           ", cols = " + std::to_string(s.cols) + when + ")";
  if (got.size() != in.size()) {
    ADD_FAILURE() << what << ": no output to compare";
    return false;
  }
  long long bad = 0, nan = 0;
  std::ostringstream first;
  first.precision(9);
  for (int r = 0; r < s.rows; ++r) {
    for (int c = 0; c < s.cols; ++c) {
      const std::size_t src = static_cast<std::size_t>(r) * s.cols + c;
      const std::size_t dst = static_cast<std::size_t>(c) * s.rows + r;
      if (std::memcmp(&got[dst], &in[src], sizeof(T)) == 0) continue;
      if (std::isnan(got[dst])) ++nan;
      if (bad++ == 0)
        first << "out[" << dst << "] (row " << c << ", column " << r << " of out) is " << got[dst]
              << ", expected in[" << src << "] (row " << r << ", column " << c << " of in) = " << in[src];
    }
  }
  if (bad == 0) return true;
  std::ostringstream os;
  os << what << ": " << bad << " of " << in.size() << " elements of out are wrong; first: " << first.str();
  if (nan == bad)
    os << "\n  (every wrong element is NaN, the poison the output held before the call: these elements were never"
          " written; check the guards at the matrix's edges and the grid size)";
  else if (nan > 0)
    os << "\n  (" << nan << " of them are NaN: never written)";
  ADD_FAILURE() << os.str();
  return false;
}

template <class T>
bool check_shape(const Shape& s, int set = 0) {
  const std::vector<T> in = random_matrix<T>(s, set);
  kit::Call call(std::string(function_name<T>()) + "(" + describe(s) + ")");
  const std::vector<T> got = run_transpose(call, in, s);
  if (got.empty()) return false;
  return judge_transpose(got, in, s, "");
}

template <class T>
void check_shapes(const std::vector<Shape>& shapes) {
  int wrong = 0;
  for (const Shape& s : shapes) wrong += check_shape<T>(s) ? 0 : 1;
  record(wrong, 0, "wrong shapes");
}

int random_size(int lo, int hi) {
  auto gen = rng();
  return std::uniform_int_distribution<int>(lo, hi)(gen);
}

}  // namespace

TEST(correctness, tiny_shapes) { check_shapes<float>({{1, 1}, {1, 2}, {2, 1}, {1, 37}, {37, 1}, {3, 5}, {7, 3}}); }

TEST(correctness, tile_boundaries) {
  check_shapes<float>({{31, 33}, {32, 32}, {33, 31}, {32, 64}, {64, 32}, {63, 65}, {65, 97}, {96, 96}});
}

TEST(correctness, non_square_and_prime_shapes) {
  check_shapes<float>({{509, 131}, {131, 509}, {1031, 3}, {3, 1031}, {random_size(100, 700), random_size(100, 700)}});
}

TEST(correctness, double_elements) {
  check_shapes<double>({{1, 1}, {1, 33}, {33, 1}, {31, 33}, {32, 32}, {33, 64}, {97, 130}, {257, 67},
                        {random_size(100, 500), random_size(100, 500)}});
}

TEST(correctness, fresh_inputs_every_call) {
  // Two calls of the same shape with different matrices: a kernel that caches its answer fails.
  const Shape s{300, 200};
  int wrong = 0;
  for (int i = 0; i < 2; ++i) wrong += check_shape<float>(s, i) ? 0 : 1;
  record(wrong, 0, "wrong calls");
}

/// transpose (or transpose_double) on A, B, A again through the same buffers.
template <class T>
kit::InterleavedStep interleaved_transpose(const Shape& s) {
  auto sets = std::make_shared<std::vector<std::vector<T>>>();
  for (int set = 0; set < 2; ++set) sets->push_back(random_matrix<T>(s, set + 2));
  return {function_name<T>(), [s, sets](int set, kit::Slots& slots) {
            kit::Call call(std::string(function_name<T>()) + "(" + describe(s) + ", " + kit::data_set_name(set) + ")", slots);
            const std::vector<T> got = run_transpose(call, (*sets)[set], s);
            return !got.empty() && judge_transpose(got, (*sets)[set], s, ", " + kit::data_set_name(set));
          }};
}

TEST(correctness, interleaved_calls) {
  // Each function on matrices A, B, A again through the same device buffers
  // (kit::check_interleaved_calls): a result kept from an earlier call is the wrong matrix's.
  const Shape s{random_size(100, 300), random_size(100, 300)};
  kit::check_interleaved_calls({interleaved_transpose<float>(s), interleaved_transpose<double>(s)});
}

// Every back-end: the emulator's findings (out of bounds, races on the tile, uninitialised shared
// reads), or on a GPU its sanitizer's, which the grader runs around these calls.
TEST(sanitizer, no_memory_errors_or_races) {
  std::vector<std::unique_ptr<kit::Call>> calls;
  for (const Shape& s : std::vector<Shape>{{1, 1}, {33, 65}, {97, 40}, {random_size(40, 200), random_size(40, 200)}}) {
    calls.push_back(std::make_unique<kit::Call>("transpose(" + describe(s) + ")", false));
    run_transpose(*calls.back(), random_matrix<float>(s), s);
  }
  for (const Shape& s : std::vector<Shape>{{33, 65}, {70, 45}}) {
    calls.push_back(std::make_unique<kit::Call>("transpose_double(" + describe(s) + ")", false));
    run_transpose(*calls.back(), random_matrix<double>(s), s);
  }
  std::vector<const kit::Call*> all;
  for (const auto& c : calls) all.push_back(c.get());
  kit::judge_findings(all);
}

#if defined(GPULAB_BUILD_BACKEND_EMU)

namespace {

Shape rubric_shape(const char* rows_key, const char* cols_key) {
  const Rubric& r = rubric();
  return {static_cast<int>(r.number("performance.emu", rows_key)), static_cast<int>(r.number("performance.emu", cols_key))};
}

/// One measured call: checked like any other (a kernel cannot be fast here and wrong elsewhere),
/// then its metrics go into the report. Returns false (reported) when there is nothing to judge.
template <class T>
bool measured_call(kit::Call& call, const Shape& s) {
  const std::vector<T> in = random_matrix<T>(s);
  const std::vector<T> got = run_transpose(call, in, s);
  if (got.empty()) return false;
  if (defence_enabled("timed-outputs") && !judge_transpose(got, in, s, ", measured run")) return false;
  if (!call.evidence().available) {
    not_measured("this emulator build has no memory-access tracing (build the emu preset with clang++)");
    return false;
  }
  kit::report_metrics(call);
  return true;
}

/// The global line (load or store) with the most sectors beyond its ideal.
const kit::MetricRow* worst_global(const kit::Call& call, bool store) {
  const kit::MetricRow* worst = nullptr;
  for (const auto& m : call.metrics())
    if (!m.shared && !m.atomic && m.store == store &&
        (!worst || m.units - m.ideal_units > worst->units - worst->ideal_units))
      worst = &m;
  return worst;
}

/// Global loads and stores of one measured call against the least they need (the matrix once, in
/// 32-byte sectors). Returns the lower of the two efficiencies; explains a low one in `os`.
template <class T>
double global_efficiency(const kit::Call& call, const Shape& s, std::ostringstream& os) {
  const kit::Evidence& e = call.evidence();
  const double least = std::ceil(static_cast<double>(sizeof(T)) * s.rows * s.cols / 32.0);
  const double load_eff = e.load_sectors ? std::min(1.0, least / static_cast<double>(e.load_sectors)) : 0.0;
  const double store_eff = e.store_sectors ? std::min(1.0, least / static_cast<double>(e.store_sectors)) : 0.0;
  os << function_name<T>() << "(" << describe(s) << "): global loads moved " << e.load_sectors
     << " sectors of 32 bytes and stores " << e.store_sectors << " where " << static_cast<long long>(least)
     << " would do: " << 100 * load_eff << "% / " << 100 * store_eff << "% of the bytes moved are used";
  for (bool store : {false, true}) {
    if ((store ? store_eff : load_eff) >= 0.999) continue;
    if (const kit::MetricRow* m = worst_global(call, store))
      os << "\n" << m->where << ": " << m->per_request() << " sectors per " << (store ? "store" : "load")
         << " request (ideal " << m->ideal_per_request() << "); neighbouring threads " << (store ? "store to" : "read")
         << " addresses " << m->lane_stride << " bytes apart";
  }
  return std::min(load_eff, store_eff);
}

/// Every shared access of the calls must need the least wavefronts its request can take.
/// Returns the worst wavefronts / ideal over all shared lines.
double worst_shared_ratio(const std::vector<const kit::Call*>& calls, std::ostringstream& os, int& shared_lines) {
  double worst = 1.0;
  const kit::MetricRow* worst_row = nullptr;
  std::vector<std::string> lines;  // distinct file:line + direction
  for (const kit::Call* c : calls) {
    for (const auto& m : c->metrics()) {
      if (!m.shared || m.atomic || m.requests == 0) continue;
      const std::string line = m.where + (m.store ? " store" : " load");
      if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(line);
      const double ratio = m.ideal_units ? static_cast<double>(m.units) / static_cast<double>(m.ideal_units) : 1.0;
      if (ratio > worst || (!worst_row && ratio >= worst)) {
        worst = std::max(worst, ratio);
        worst_row = &m;
      }
    }
  }
  shared_lines = static_cast<int>(lines.size());
  if (worst_row && worst > 1.0)
    os << worst_row->where << ": a shared " << (worst_row->store ? "store" : "load") << " needs "
       << worst_row->per_request() << " wavefronts per request (ideal " << worst_row->ideal_per_request() << "): a "
       << worst << "-way bank conflict; neighbouring lanes' addresses are " << worst_row->lane_stride
       << " bytes apart";
  return worst;
}

/// Bank conflicts that would cost time on the GPU the rubric names: the shared-memory wavefronts of
/// each measured call (both shapes), spread over its multiprocessors, against the DRAM moving the
/// matrix at its copy bandwidth (the performance model's roofline, gpulab/grade/perfmodel.hpp).
/// A transpose is bound by DRAM, so a conflict costs nothing until the shared memory's time,
/// increased by the model's margin, reaches the DRAM's.
template <class T>
void check_shared_time(const char* hint) {
  const Rubric& r = rubric();
  const std::string gpu = r.text("performance.emu", "model").value_or("H200");
  const double margin = r.number("performance.emu", "shared_time_margin");
  std::vector<std::unique_ptr<kit::Call>> calls;
  std::vector<const kit::Call*> judged;
  for (const Shape& s : {rubric_shape("rows", "cols"), rubric_shape("odd_rows", "odd_cols")}) {
    calls.push_back(std::make_unique<kit::Call>(std::string(function_name<T>()) + "(" + describe(s) + ", measured)"));
    if (!measured_call<T>(*calls.back(), s)) return;
    judged.push_back(calls.back().get());
  }
  double worst = 0;  // shared time x (1 + margin) / DRAM time, the worst call
  std::ostringstream os;
  os.precision(3);
  for (const kit::Call* c : judged) {
    const kit::CopyPrediction p = kit::predict_fraction_of_copy(*c, gpu);
    if (!p.available) {
      not_measured(p.why);
      return;
    }
    const double shared = p.seconds.at("shared"), dram = p.seconds.at("dram");
    const double ratio = dram > 0 ? shared * (1 + margin) / dram : 0;
    worst = std::max(worst, ratio);
    os << c->what() << ": on an NVIDIA " << gpu << " the shared-memory wavefronts would take " << shared / dram
       << " of the time its DRAM takes to move the matrix\n";
  }
  int lines = 0;
  std::ostringstream conflicts;
  conflicts.precision(3);
  const double wavefronts = worst_shared_ratio(judged, conflicts, lines);
  record(worst, 1.0, "shared time x " + std::to_string(1 + margin).substr(0, 4) + " / DRAM time (worst call)");
  if (worst > 1.0) {
    ADD_FAILURE() << os.str() << conflicts.str() << "\nthe shared memory, not the DRAM, would bound this transpose (it must stay"
                  << " below the DRAM's time with " << 100 * margin << "% to spare)\n  hint: " << hint;
  } else {
    os << (lines ? std::to_string(lines) + " shared access line(s); " : std::string("no shared memory accesses; "))
       << (wavefronts > 1.0 ? conflicts.str() + " (hidden behind the DRAM's time)" : std::string("no bank conflicts"));
    note(os.str());
  }
}

}  // namespace

TEST(performance, coalesced_global_access) {
  // Both functions, loads and stores: all the call's global traffic against the least it needs.
  const double min_eff = rubric().number("performance.emu", "min_global_efficiency");
  const Shape s = rubric_shape("rows", "cols");
  kit::Call fcall("transpose(" + describe(s) + ", measured)");
  if (!measured_call<float>(fcall, s)) return;
  kit::Call dcall("transpose_double(" + describe(s) + ", measured)");
  if (!measured_call<double>(dcall, s)) return;
  std::ostringstream os;
  os.precision(3);
  const double f = global_efficiency<float>(fcall, s, os);
  os << "\n";
  const double d = global_efficiency<double>(dcall, s, os);
  const double eff = std::min(f, d);
  record(eff, min_eff, "global efficiency (worst of loads and stores)");
  suggest_threshold("min_global_efficiency", eff, 0.8);
  if (eff < min_eff)
    ADD_FAILURE() << os.str()
                  << "\n  hint: one side of a direct transpose is always scattered. Stage a 32 x 32 tile in shared memory:"
                     " read it along rows of `in`, write it along rows of `out` (README, \"The ladder\", step 2)";
  else
    note(os.str());
}

TEST(performance, shared_conflicts_hidden_float) {
  check_shared_time<float>(
      "lane x reads column x of a 32-float-wide tile: all 32 words in one bank. Pad each row by one float"
      " (tile[32][33]) or store each row's elements at columns permuted by an XOR with the row (README, \"The"
      " ladder\", steps 3 and 4: the lesson asks which XOR)");
}

TEST(performance, shared_conflicts_hidden_double) {
  check_shared_time<double>(
      "a double spans two banks, so 32 lanes need at least 2 wavefronts; count the banks of tile[x][k] for"
      " lanes x = 0..31 and change the row length or the column index so that no bank serves more than 2 words"
      " (README, \"Exercise 2: 8-byte elements\")");
}

#else  // GPU back-ends

namespace {

/// The timed runs' outputs are checked too: the input set once more, into a poisoned buffer.
template <class T>
void check_timed_output(const std::vector<T>& host, const Shape& s) {
  kit::Call call(std::string(function_name<T>()) + "(" + describe(s) + ", timed inputs)");
  const std::vector<T> got = run_transpose(call, host, s);
  if (!got.empty() && defence_enabled("timed-outputs")) judge_transpose(got, host, s, ", timed run");
}

template <class T>
std::vector<T> transposed(const std::vector<T>& in, const Shape& s) {
  std::vector<T> out(in.size());
  for (std::size_t r = 0; r < static_cast<std::size_t>(s.rows); ++r)
    for (std::size_t c = 0; c < static_cast<std::size_t>(s.cols); ++c) out[c * s.rows + r] = in[r * s.cols + c];
  return out;
}

template <class T>
kit::Ratio measure_bandwidth(const Shape& s, kit::TimedCall& timed, const T* in, T* out) {
  const std::size_t elems = static_cast<std::size_t>(s.rows) * s.cols;
  const std::string key = std::string(function_name<T>()) + "_" + std::to_string(s.rows) + "x" + std::to_string(s.cols);
  const double bytes = 2.0 * sizeof(T) * static_cast<double>(elems);  // read once, written once
  const Timing t = timed.time([&] { call_transpose(in, out, s.rows, s.cols); }, kit::Work{bytes / 2, bytes / 2, 0});
  const double bw = bytes / (t.median_ms * 1e-3);
  const double ceiling = kit::measured("copy bandwidth " + key, [&] { return copy_bandwidth(2 * elems * sizeof(T)); });
  std::ostringstream os;
  os.precision(3);
  os << function_name<T>() << "(" << describe(s) << "): " << bw / 1e9 << " GB/s = " << bw / ceiling
     << " of the copy kernel's " << ceiling / 1e9 << " GB/s (median of " << t.samples << " runs, rse "
     << 100 * t.rse << "%)";
  info(key + "_ms", std::to_string(t.median_ms));
  info(key + "_copy_gbps", std::to_string(ceiling / 1e9));
  return {bw / ceiling, t.rse + 0.01, os.str()};
}

template <class T>
void check_bandwidth(const std::vector<Shape>& shapes, const std::string& threshold_key) {
  const std::string section = backend_section("performance");
  const double min_fraction = rubric().number(section, threshold_key);
  double worst = INFINITY;
  std::string report;
  for (const Shape& s : shapes) {
    const std::size_t elems = static_cast<std::size_t>(s.rows) * s.cols;
    // Two input sets (the second negated) taking turns in one buffer between timed runs
    // (kit::TimedCall), every sampled run's output against its set's transpose, bit for bit.
    std::vector<T> host(elems), negated(elems);
    std::uint64_t x = rng()();
    for (std::size_t i = 0; i < elems; ++i) {
      x ^= x << 13; x ^= x >> 7; x ^= x << 17;
      host[i] = static_cast<T>(static_cast<std::int64_t>(x % 2001) - 1000) / static_cast<T>(1000);
      negated[i] = -host[i];
    }
    const std::vector<T> want[2] = {transposed(host, s), transposed(negated, s)};
    const std::string key = std::string(function_name<T>()) + "_" + std::to_string(s.rows) + "x" + std::to_string(s.cols);
    kit::TimedCall timed(key, 2);
    const T* in = timed.template rotated<T>({&host, &negated});
    T* out = timed.template output<T>(elems);
    timed.template check<T>(out, {&want[0], &want[1]}, 0.0, "out");
    const kit::Ratio m = kit::measure_ratio(min_fraction, [&] { return measure_bandwidth<T>(s, timed, in, out); });
    check_timed_output(host, s);
    check_timed_output(negated, s);
    worst = std::min(worst, m.value);
    report += m.text + "\n";
  }
  Measured(worst, min_fraction, "of copy bandwidth")
      .suggest(threshold_key, 0.85)
      .judge(report,
             std::string("below ") + kit::num(min_fraction) + " of the copy bandwidth\n  hint: coalesce both global sides through a shared tile, then remove its"
                     " bank conflicts (padding or an XOR swizzle); see labs/03-bank-conflicts/README.md");
}

std::vector<Shape> rubric_shapes(const std::string& rows_key, const std::string& cols_key) {
  const std::string section = backend_section("performance");
  const std::vector<double> rows = rubric().numbers(section, rows_key), cols = rubric().numbers(section, cols_key);
  std::vector<Shape> shapes;
  for (std::size_t i = 0; i < rows.size() && i < cols.size(); ++i)
    shapes.push_back({static_cast<int>(rows[i]), static_cast<int>(cols[i])});
  return shapes;
}

}  // namespace

TEST(performance, bandwidth_vs_copy) { check_bandwidth<float>(rubric_shapes("rows", "cols"), "min_fraction_of_copy"); }

TEST(performance, bandwidth_vs_copy_double) { check_bandwidth<double>(rubric_shapes("double_rows", "double_cols"), "min_fraction_of_copy_double"); }

#endif
