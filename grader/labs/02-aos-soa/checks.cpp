// Lab 02 checks: the particle pipeline of aos_soa.hpp must give the right results whatever the
// layout (correctness), be free of memory bugs (sanitizer), and use the bytes it moves
// (performance: each call's fraction of a copy kernel's bandwidth, measured on a GPU, predicted
// for an H200 from the emulator's counts on the emulator).
// The layout inside `store` is the student's: it is only ever judged through the results.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "aos_soa.hpp"
#include "gpulab/grade/compare.hpp"
#include "gpulab/grade/defences.hpp"
#include "gpulab/grade/harness.hpp"
#include "gpulab/grade/inputs.hpp"
#include "gpulab/grade/kit.hpp"
#include "gpulab/grade/perfmodel.hpp"
#include "gpulab/grade/timing.hpp"
#include "gpulab/host.hpp"

/// The grader's own AoS positions-only kernel (aos_baseline.cu), timed next to the submission's.
void lab02_aos_baseline_distances(const Particle* aos, int n, float4 c, float* dist2);

namespace {
using namespace gpulab;
using namespace gpulab::grade;
namespace pp = particle_physics;

constexpr double u = kFloatUnitRoundoff;

std::vector<Particle> random_particles(int n, int set = 0) {
  auto gen = kit::generator(set);
  auto in = [&](float lo, float hi) { return kit::UniformReal<float>{lo, hi}(gen); };
  std::vector<Particle> p(static_cast<std::size_t>(n));
  for (Particle& q : p) {
    q.position = {in(-10, 10), in(-10, 10), in(-10, 10), in(-1, 1)};
    q.velocity = {in(-5, 5), in(-5, 5), in(-5, 5), in(-1, 1)};
    q.colour = {in(0, 1), in(0, 1), in(0, 1), in(0, 1)};
    q.attributes = {in(-0.5f, 2), in(0.1f, 1), in(0, 1), in(0.5f, 2)};  // life (some dead), size, seed, mass
  }
  return p;
}

std::string at(int n) { return "(n = " + std::to_string(n) + ")"; }

/// particles_to_layout on fresh particles; returns the store's bytes (empty if the call failed).
std::vector<float4> to_layout(kit::Call& call, const std::vector<Particle>& p, int n) {
  const Particle* d_p = call.input(p, "aos");
  float4* d_store = call.output<float4>(4 * static_cast<std::size_t>(n), "store");
  if (!call.run([&] { particles_to_layout(d_p, d_store, n); })) return {};
  return call.result(d_store);
}

/// particles_from_layout of a store; returns the particles (empty if the call failed).
std::vector<Particle> from_layout(kit::Call& call, const std::vector<float4>& store, int n) {
  const float4* d_store = call.input(store, "store", false);
  Particle* d_p = call.output<Particle>(static_cast<std::size_t>(n), "aos");
  if (!call.run([&] { particles_from_layout(d_store, d_p, n); })) return {};
  return call.result(d_p);
}

/// particle_distances over a store; the store may be read in part (positions only).
std::vector<float> distances(kit::Call& call, const std::vector<float4>& store, int n, float4 c) {
  const float4* d_store = call.input(store, "store", false);
  float* d_dist = call.output<float>(static_cast<std::size_t>(n), "dist2");
  if (!call.run([&] { particle_distances(d_store, n, c, d_dist); })) return {};
  return call.result(d_dist);
}

/// particle_step in place; returns the store after it.
std::vector<float4> step(kit::Call& call, const std::vector<float4>& store, int n, float dt) {
  float4* d_store = call.output<float4>(store.size(), "store", &store);
  if (!call.run([&] { particle_step(d_store, n, dt); })) return {};
  return call.result(d_store);
}

std::vector<float> floats_of(const std::vector<Particle>& p) {
  std::vector<float> f(p.size() * 16);
  if (!p.empty()) std::memcpy(f.data(), p.data(), f.size() * sizeof(float));
  return f;
}

const char* const kField[] = {"position", "velocity", "colour", "attributes"};
std::string element(std::size_t i) {
  return "particle " + std::to_string(i / 16) + " " + kField[i / 4 % 4] + "." + "xyzw"[i % 4];
}

/// Compares particles with expected values; tol all zero means bit for bit.
bool judge_particles(const std::vector<Particle>& got, const std::vector<double>& ref, const std::vector<double>& tol,
                     const std::string& what) {
  const Comparison c = compare_all(floats_of(got), ref, tol, element);
  if (!c.ok) ADD_FAILURE() << what << ": " << c.bad << " of " << ref.size() << " floats are wrong; first: " << c.first_message;
  record(c.worst_ratio, 1.0, "error/tolerance");
  return c.ok;
}

/// particles_from_layout of a store must give p back, bit for bit.
bool judge_round_trip(const std::vector<Particle>& got, const std::vector<Particle>& p, const std::string& what) {
  std::vector<double> ref;
  for (float x : floats_of(p)) ref.push_back(x);
  return judge_particles(got, ref, std::vector<double>(ref.size(), 0.0), what);
}

/// The round trip: particles_from_layout(particles_to_layout(p)) == p, bit for bit.
void check_round_trip(int n) {
  const std::vector<Particle> p = random_particles(n);
  kit::Call to("particles_to_layout" + at(n)), back("particles_from_layout" + at(n));
  const std::vector<float4> store = to_layout(to, p, n);
  if (store.empty()) return;
  const std::vector<Particle> got = from_layout(back, store, n);
  if (!got.empty()) judge_round_trip(got, p, "particles_from_layout(particles_to_layout(p)) " + at(n));
}

/// Squared distances in double; tolerance: the subtractions and squares of a float evaluation
/// (with or without fma) err by at most a few roundings of the sum of squares.
bool check_distances(int n, const std::vector<Particle>& p, const std::vector<float>& got, float4 c, const std::string& when) {
  std::vector<double> ref(p.size()), tol(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double dx = double(p[i].position.x) - c.x, dy = double(p[i].position.y) - c.y, dz = double(p[i].position.z) - c.z;
    ref[i] = dx * dx + dy * dy + dz * dz;
    tol[i] = 8 * u * ref[i] + 1e-30;
  }
  const Comparison r = compare_all(got, ref, tol, [](std::size_t i) { return "dist2[" + std::to_string(i) + "]"; });
  if (!r.ok) ADD_FAILURE() << r.bad << " of " << n << " distances are wrong " << when << at(n) << "; first: " << r.first_message;
  record(r.worst_ratio, 1.0, "error/tolerance");
  return r.ok;
}

float4 random_centre(int set = 0) {
  auto gen = kit::generator(set);
  kit::UniformReal<float> d{-5, 5};
  return {d(gen), d(gen), d(gen), NAN};  // c.w must be ignored
}

void check_distances_at(int n) {
  const std::vector<Particle> p = random_particles(n);
  const float4 c = random_centre();
  kit::Call to("particles_to_layout" + at(n)), call("particle_distances" + at(n));
  const std::vector<float4> store = to_layout(to, p, n);
  if (store.empty()) return;
  const std::vector<float> got = distances(call, store, n, c);
  if (!got.empty()) check_distances(n, p, got, c, "");
}

/// particle_step's lines of aos_soa.hpp in double, with a tolerance per float of a few roundings
/// of the magnitudes each line combines (fma or not, any association).
void step_reference(const std::vector<Particle>& p, float dt, std::vector<double>& ref, std::vector<double>& tol) {
  ref.clear();
  tol.clear();
  for (const Particle& q : p) {
    const double m = q.attributes.w, k = double(pp::kDrag) / m, g[3] = {0, pp::kGravityY, 0};
    const double v0[3] = {q.velocity.x, q.velocity.y, q.velocity.z}, x0[3] = {q.position.x, q.position.y, q.position.z};
    double v[3], x[3], tv[3], tx[3];
    for (int a = 0; a < 3; ++a) {
      v[a] = v0[a] + (g[a] - v0[a] * k) * dt;
      tv[a] = 8 * u * (std::fabs(v0[a]) + (std::fabs(g[a]) + std::fabs(v0[a] * k)) * dt);
      x[a] = x0[a] + v[a] * dt;
      tx[a] = 8 * u * (std::fabs(x0[a]) + std::fabs(v[a] * dt)) + tv[a] * dt;
    }
    const double life = double(q.attributes.x) - dt, fade = 1 - double(pp::kFade) * dt;
    const double alpha = std::min(double(q.colour.w), std::max(life, 0.0));
    const double vals[16] = {x[0], x[1], x[2], q.position.w, v[0], v[1], v[2], q.velocity.w,
                             q.colour.x * fade, q.colour.y * fade, q.colour.z * fade, alpha,
                             life, q.attributes.y * (1 + double(pp::kGrowth) * dt), q.attributes.z, q.attributes.w};
    const double tols[16] = {tx[0], tx[1], tx[2], 0, tv[0], tv[1], tv[2], 0,
                             4 * u * vals[8], 4 * u * vals[9], 4 * u * vals[10], 4 * u * (std::fabs(life) + 1),
                             4 * u * (std::fabs(q.attributes.x) + dt), 4 * u * std::fabs(vals[13]), 0, 0};
    ref.insert(ref.end(), vals, vals + 16);
    tol.insert(tol.end(), tols, tols + 16);
  }
}

float random_dt(int set = 0) {
  auto gen = kit::generator(set);
  return kit::UniformReal<float>{0.001f, 0.1f}(gen);
}

/// to_layout -> step -> from_layout, compared with the reference step of the particles.
void check_step_at(int n) {
  const std::vector<Particle> p = random_particles(n);
  const float dt = random_dt();
  kit::Call to("particles_to_layout" + at(n)), call("particle_step" + at(n)), back("particles_from_layout" + at(n));
  const std::vector<float4> store = to_layout(to, p, n);
  if (store.empty()) return;
  const std::vector<float4> stepped = step(call, store, n, dt);
  if (stepped.empty()) return;
  const std::vector<Particle> got = from_layout(back, stepped, n);
  if (got.empty()) return;
  std::vector<double> ref, tol;
  step_reference(p, dt, ref, tol);
  judge_particles(got, ref, tol, "after particle_step(dt = " + std::to_string(dt) + ") " + at(n));
}

int random_size(int lo, int hi) {
  auto gen = rng();
  return std::uniform_int_distribution<int>(lo, hi)(gen);
}

/// The pipeline on two data sets through the same device buffers (kit::check_interleaved_calls),
/// each function on A, B, A before the next: the store each set's latest particles_to_layout wrote
/// is what the later functions get, so a function that reads anything but its arguments (positions
/// particles_to_layout kept aside, a memo by pointer) returns the other set's results.
std::vector<kit::InterleavedStep> pipeline_steps(int n) {
  struct Set {
    std::vector<Particle> particles;
    float4 centre;
    float dt;
    std::vector<float4> store;  // as particles_to_layout last wrote it for this set
  };
  auto sets = std::make_shared<std::vector<Set>>();
  for (int k = 0; k < 2; ++k) sets->push_back({random_particles(n, k), random_centre(k), random_dt(k), {}});
  auto name = [n](const std::string& f, int set) { return f + "(n = " + std::to_string(n) + ", " + kit::data_set_name(set) + ")"; };
  auto round_trip = [n, name](const std::vector<float4>& store, const Set& s, int set, const std::string& after) {
    kit::Call back(name("particles_from_layout", set) + ", fresh buffers");
    const std::vector<Particle> got = from_layout(back, store, n);
    return !got.empty() && judge_round_trip(got, s.particles, "particles_from_layout of the store " + after);
  };
  return {
      {"particles_to_layout",
       [=](int set, kit::Slots& slots) {
         Set& s = (*sets)[set];
         kit::Call to(name("particles_to_layout", set), slots);
         s.store = to_layout(to, s.particles, n);
         return !s.store.empty() && round_trip(s.store, s, set, name("particles_to_layout", set) + " wrote");
       }},
      {"particle_distances",
       [=](int set, kit::Slots& slots) {
         const Set& s = (*sets)[set];
         kit::Call call(name("particle_distances", set), slots);
         const std::vector<float> got = distances(call, s.store, n, s.centre);
         return !got.empty() && check_distances(n, s.particles, got, s.centre, "(" + kit::data_set_name(set) + ") ");
       }},
      {"particle_step",
       [=](int set, kit::Slots& slots) {
         const Set& s = (*sets)[set];
         kit::Call call(name("particle_step", set), slots), back(name("particles_from_layout", set) + ", fresh buffers");
         const std::vector<float4> stepped = step(call, s.store, n, s.dt);
         if (stepped.empty()) return false;
         const std::vector<Particle> got = from_layout(back, stepped, n);
         std::vector<double> ref, tol;
         step_reference(s.particles, s.dt, ref, tol);
         return !got.empty() && judge_particles(got, ref, tol, "after " + name("particle_step", set));
       }},
      {"particles_from_layout",
       [=](int set, kit::Slots& slots) {
         const Set& s = (*sets)[set];
         kit::Call back(name("particles_from_layout", set), slots);
         const std::vector<Particle> got = from_layout(back, s.store, n);
         return !got.empty() && judge_round_trip(got, s.particles, name("particles_from_layout", set));
       }},
  };
}

}  // namespace

TEST(correctness, round_trip_tiny_sizes) { for (int n : {1, 2, 3, 31, 33}) check_round_trip(n); }

TEST(correctness, round_trip_block_boundaries) {
  for (int n : {255, 256, 257, 1023, 1025, random_size(2000, 5000)}) check_round_trip(n);
}

TEST(correctness, positions_only_distances) {
  for (int n : {1, 7, 257, 1000, random_size(2000, 5000)}) check_distances_at(n);
}

TEST(correctness, all_fields_step) {
  for (int n : {1, 33, 256, 1001, random_size(2000, 5000)}) check_step_at(n);
}

TEST(correctness, interleaved_calls) { kit::check_interleaved_calls(pipeline_steps(random_size(500, 1500))); }

// The emulator's findings over the whole pipeline, or on a GPU those of its sanitizer.
TEST(sanitizer, no_memory_errors_or_races) {
  std::vector<std::unique_ptr<kit::Call>> calls;
  auto next = [&](const std::string& what) { return calls.emplace_back(std::make_unique<kit::Call>(what, false)).get(); };
  for (int n : {1, 257, 1000}) {
    const std::vector<float4> store = to_layout(*next("particles_to_layout" + at(n)), random_particles(n), n);
    if (store.empty()) continue;
    distances(*next("particle_distances" + at(n)), store, n, random_centre());
    const std::vector<float4> stepped = step(*next("particle_step" + at(n)), store, n, 0.01f);
    if (!stepped.empty()) from_layout(*next("particles_from_layout" + at(n)), stepped, n);
  }
  std::vector<const kit::Call*> all;
  for (const auto& c : calls) all.push_back(c.get());
  kit::judge_findings(all);
}

#if defined(GPULAB_BUILD_BACKEND_EMU)

namespace {

int emu_size() { return static_cast<int>(rubric().number("performance.emu", "size")); }
double emu_min(const char* key) { return rubric().number("performance.emu", key); }

/// The call `function` of the pipeline at n / 4 on fresh particles, each after particles_to_layout
/// as in the pipeline, and what it says of `call` (the same function at n) at the GPU grade's size
/// (performance.emu gpu_size; kit::scale_to_size: the work grows as n). `function`:
/// particles_to_layout, particle_distances, particle_step or particles_from_layout.
kit::GpuScale at_gpu_size(const kit::Call& call, int n, const std::string& function) {
  const int q = n / 4;
  kit::Call to("particles_to_layout" + at(q) + ", grid"), other(function + at(q) + ", grid");
  const std::vector<float4> store = to_layout(to, random_particles(q), q);
  const kit::Call* small = &other;
  if (function == "particles_to_layout" || store.empty()) small = &to;
  else if (function == "particle_distances") distances(other, store, q, random_centre());
  else if (function == "particle_step") step(other, store, q, 0.01f);
  else from_layout(other, store, q);
  return kit::scale_to_size(call, n, *small, q, rubric().number("performance.emu", "gpu_size"), 1.0);
}

/// `least_bytes`: what any correct layout moves (the ceiling of refuse_implausible), where that is
/// less than the GPU grade's `useful_bytes`: a layout may leave out the lanes a function does not
/// use (position.w and velocity.w are carried, never read by the distances or the step).
double judge_predicted(const kit::Call& call, double useful_bytes, double read_bytes, const kit::GpuScale& scale,
                       double min, const std::string& hint, double least_bytes = 0) {
  return kit::judge_predicted_fraction_of_copy(call, useful_bytes, read_bytes, scale, min, hint,
                                               rubric().text_or("performance.emu", "model", "H200"), least_bytes);
}

}  // namespace

TEST(performance, positions_only_predicted) {
  const int n = emu_size();
  const std::vector<Particle> p = random_particles(n);
  const float4 c = random_centre();
  kit::Call to("particles_to_layout" + at(n)), call("particle_distances" + at(n) + ", measured");
  const std::vector<float4> store = to_layout(to, p, n);
  if (store.empty()) return;
  const std::vector<float> got = distances(call, store, n, c);
  if (got.empty()) return;
  if (defence_enabled("timed-outputs")) check_distances(n, p, got, c, "in the measured run ");
  const kit::GpuScale scale = at_gpu_size(call, n, "particle_distances");
  // Least: x, y, z read and dist2 written, 16 bytes a particle (position.w is never needed).
  judge_predicted(call, 20.0 * n, 16.0 * n, scale, emu_min("min_fraction_of_copy"),
                  "a positions-only kernel should move positions only: with 64-byte particles side by side (AoS),"
                  " the DRAM moves whole particles for the 16 bytes it uses. Keep the positions in an array of"
                  " their own (README: \"The idea\").",
                  16.0 * n);
}

TEST(performance, all_fields_predicted) {
  const int n = emu_size();
  const std::vector<Particle> p = random_particles(n);
  kit::Call to("particles_to_layout" + at(n)), call("particle_step" + at(n) + ", measured"), back("particles_from_layout" + at(n));
  const std::vector<float4> store = to_layout(to, p, n);
  if (store.empty()) return;
  const float dt = random_dt();
  const std::vector<float4> stepped = step(call, store, n, dt);
  if (stepped.empty()) return;
  // The grid's growth first: the runner and the judge must make the same calls whichever defences
  // are on.
  const kit::GpuScale scale = at_gpu_size(call, n, "particle_step");
  if (defence_enabled("timed-outputs")) {
    const std::vector<Particle> got = from_layout(back, stepped, n);
    std::vector<double> ref, tol;
    step_reference(p, dt, ref, tol);
    if (got.empty() || !judge_particles(got, ref, tol, "particle_step in the measured run " + at(n))) return;
  }
  // Least: 52 bytes a particle read (position and velocity x, y, z; colour; life, size, mass) and
  // 48 written (position and velocity x, y, z; colour; life, size): position.w, velocity.w and the
  // seed pass through unchanged.
  judge_predicted(call, 128.0 * n, 64.0 * n, scale, emu_min("min_fraction_of_copy_all_fields"),
                  "every field is read and written once: each field's stores should be whole float4 runs, one"
                  " array per field, lanes 16 bytes apart. Stores 32 or 64 bytes apart write a sector and a line"
                  " per lane, and an H200's L2 takes them at the line count's pace; README: \"The counter-case\".",
                  100.0 * n);
}

TEST(performance, conversion_predicted) {
  const int n = emu_size();
  const std::vector<Particle> p = random_particles(n);
  kit::Call to("particles_to_layout" + at(n) + ", measured"), back("particles_from_layout" + at(n) + ", measured");
  const std::vector<float4> store = to_layout(to, p, n);
  if (store.empty()) return;
  const std::vector<Particle> got = from_layout(back, store, n);
  if (got.empty()) return;
  // The grids' growth before any verdict (the runner and the judge make the same calls).
  const kit::GpuScale to_scale = at_gpu_size(to, n, "particles_to_layout");
  const kit::GpuScale back_scale = at_gpu_size(back, n, "particles_from_layout");
  std::vector<double> ref;
  for (float x : floats_of(p)) ref.push_back(x);
  if (defence_enabled("timed-outputs") &&
      !judge_particles(got, ref, std::vector<double>(ref.size(), 0.0), "round trip in the measured run " + at(n)))
    return;
  const std::string hint =
      "a thread per particle writes (or reads) 64 bytes apart on the AoS side: a strided store writes 32 sectors"
      " in 16 lines per request. Stage a tile of particles in shared memory so that both sides move consecutive"
      " float4 (README: \"Converting AoS to SoA\").";
  judge_predicted(to, 128.0 * n, 64.0 * n, to_scale, emu_min("min_fraction_of_copy_conversion"), hint);
  judge_predicted(back, 128.0 * n, 64.0 * n, back_scale, emu_min("min_fraction_of_copy_conversion"), hint);
}

#else  // GPU back-ends

namespace {

/// The timed runs' data (kit::TimedCall): two particle sets, their squared distances to the
/// centre (the reference, in float), and each set's particles on the device for the untimed calls
/// that make what only the code under test knows (its layout).
struct TimedData {
  int n;
  float4 centre;
  std::vector<Particle> particles[2];
  std::vector<float> dist2[2];
  double dist2_tolerance = 0;
  kit::DeviceData device;
  const Particle* aos[2] = {nullptr, nullptr};

  explicit TimedData(int count) : n(count), centre(random_centre()) {
    for (int set = 0; set < 2; ++set) {
      particles[set] = random_particles(n, set);
      aos[set] = device.upload(particles[set]);
      for (const Particle& q : particles[set]) {
        const double dx = double(q.position.x) - centre.x, dy = double(q.position.y) - centre.y,
                     dz = double(q.position.z) - centre.z, d = dx * dx + dy * dy + dz * dz;
        dist2[set].push_back(static_cast<float>(d));
        dist2_tolerance = std::max(dist2_tolerance, 16 * u * d + 1e-30);  // check_distances' bound, twice
      }
    }
  }
  /// The set's store in the code under test's layout (its particles_to_layout, untimed).
  std::function<void(int, float4*)> store() const {
    return [this](int set, float4* dst) { particles_to_layout(aos[set], dst, n); };
  }
};

int gpu_size() { return static_cast<int>(rubric().number(backend_section("performance"), "size")); }

}  // namespace

/// Useful bandwidth of the positions-only call (16 bytes read + 4 written per particle) against a
/// float4 copy kernel, and the grader's AoS kernel on the same particles, in the same run.
TEST(performance, positions_only_bandwidth) {
  const std::string section = backend_section("performance");
  const int n = gpu_size();
  const double min_fraction = rubric().number(section, "min_fraction_of_copy");
  TimedData d(n);
  // The conversion is timed too (its speed goes in the report): its store must be the one it makes untimed.
  kit::TimedCall to("particles_to_layout", 2);
  const Particle* aos = to.rotated<Particle>({&d.particles[0], &d.particles[1]});
  float4* written = to.output<float4>(4 * static_cast<std::size_t>(n));
  to.check<float4>(written, 4 * static_cast<std::size_t>(n), d.store(), 0.0, "store");
  const Timing conv = to.time([&] { particles_to_layout(aos, written, n); }, kit::Work{64.0 * n, 64.0 * n, 0});
  // The store in the submission's layout, each set made untimed; every sampled run's distances
  // against the reference of its set.
  kit::TimedCall timed("particle_distances", 2);
  const float4* store = timed.rotated<float4>(4 * static_cast<std::size_t>(n), d.store());
  float* dist2 = timed.output<float>(static_cast<std::size_t>(n));
  timed.check<float>(dist2, {&d.dist2[0], &d.dist2[1]}, d.dist2_tolerance, "dist2");
  float* base_dist2 = d.device.scratch<float>(static_cast<std::size_t>(n));
  const double useful = 20.0 * n;
  const kit::Ratio r = kit::measure_ratio(min_fraction, [&] {
    // The physical floor's work is the least any layout moves: x, y, z read (position.w is never
    // needed), dist2 written; the ratio below counts the 20 bytes of the float4 layouts.
    const Timing t = timed.time([&] { particle_distances(store, n, d.centre, dist2); }, kit::Work{12.0 * n, 4.0 * n, 8.0 * n});
    const Timing base = kit::time("aos baseline", [&](int i) {
      lab02_aos_baseline_distances(d.aos[i % 2], n, d.centre, base_dist2);
    });
    const double ceiling = kit::measured("copy bandwidth", [&] { return copy_bandwidth(std::size_t{2} * 16 * n); });
    const double bw = useful / (t.median_ms * 1e-3), base_bw = useful / (base.median_ms * 1e-3);
    std::ostringstream os;
    os.precision(3);
    os << "n = " << n << ": particle_distances moves " << bw / 1e9 << " useful GB/s = " << bw / ceiling
       << " of the copy kernel's " << ceiling / 1e9 << " GB/s (median of " << t.samples << " runs, rse " << 100 * t.rse
       << "%); the grader's AoS kernel: " << base_bw / ceiling << " of copy, " << base.median_ms / t.median_ms
       << "x the submission's time";
    info("distances_ms", std::to_string(t.median_ms));
    info("aos_baseline_ms", std::to_string(base.median_ms));
    info("to_layout_ms", std::to_string(conv.median_ms));
    info("copy_gbps", std::to_string(ceiling / 1e9));
    return kit::Ratio{bw / ceiling, t.rse + 0.01, os.str()};
  });
  // The kernels' results are checked through the kit too (fresh particles, up to 2^20 of them).
  if (defence_enabled("timed-outputs")) check_distances_at(std::min(n, 1 << 20));
  Measured(r.value, min_fraction, "of copy bandwidth")
      .suggest("min_fraction_of_copy", 0.75)
      .judge(r.text,
             std::string("\nbelow ") + kit::num(min_fraction) + " of the copy bandwidth\n  hint: a positions-only kernel over AoS moves whole particles; keep the"
                     " positions in an array of their own (labs/02-aos-soa/README.md, \"The idea\")");
}

/// Useful bandwidth (bytes every particle must move / time) of one timed call against the copy
/// kernel's over as many bytes, in the same run; `what` names the call in the report.
kit::Ratio bandwidth_vs_copy(const std::string& what, double threshold, double useful_bytes, kit::TimedCall& timed,
                             const std::function<void()>& call, const kit::Work& work) {
  return kit::measure_ratio(threshold, [&] {
    const Timing t = timed.time(call, work);
    const double ceiling = kit::measured("copy bandwidth " + what, [&] {
      return copy_bandwidth(static_cast<std::size_t>(useful_bytes));
    });
    const double bw = useful_bytes / (t.median_ms * 1e-3);
    std::ostringstream os;
    os.precision(3);
    os << what << " moves " << bw / 1e9 << " useful GB/s = " << bw / ceiling << " of the copy kernel's "
       << ceiling / 1e9 << " GB/s (median of " << t.samples << " runs, rse " << 100 * t.rse << "%)";
    info(what + "_ms", std::to_string(t.median_ms));
    return kit::Ratio{bw / ceiling, t.rse + 0.01, os.str()};
  });
}

/// The all-fields call (every field of every particle read and written: 128 bytes per particle)
/// against the copy kernel: a layout that speeds up the positions must not slow this one down.
TEST(performance, all_fields_bandwidth) {
  const std::string section = backend_section("performance");
  const int n = gpu_size();
  const double min_fraction = rubric().number(section, "min_fraction_of_copy_all_fields");
  TimedData d(n);
  const float dt = 1e-4f;
  // Every run steps its set's store afresh (restored untimed), and must give what the same step
  // gives untimed on a copy of it (only the code under test knows its layout).
  kit::TimedCall timed("particle_step", 2);
  float4* store = timed.rotated<float4>(4 * static_cast<std::size_t>(n), d.store());
  timed.check<float4>(store, 4 * static_cast<std::size_t>(n),
                      [&](int set, float4* dst) {
                        particles_to_layout(d.aos[set], dst, n);
                        particle_step(dst, n, dt);
                      },
                      0.0, "store");
  // The floor's work: what any layout must read (52 bytes: position and velocity x, y, z, colour,
  // life, size, mass) and write (48: the same less the mass); position.w, velocity.w and the seed
  // pass through. The ratio counts all 128 bytes.
  const kit::Ratio r = bandwidth_vs_copy("particle_step", min_fraction, 128.0 * n, timed,
                                         [&] { particle_step(store, n, dt); }, kit::Work{52.0 * n, 48.0 * n, 30.0 * n});
  if (defence_enabled("timed-outputs")) check_step_at(std::min(n, 1 << 20));
  record(r.value, min_fraction, "of copy bandwidth (all fields)");
  suggest_threshold("min_fraction_of_copy_all_fields", r.value, 0.75);
  if (r.value < min_fraction)
    ADD_FAILURE() << "n = " << n << ": " << r.text << "\nbelow " << kit::num(min_fraction)
                  << " of the copy bandwidth\n  hint: the all-fields kernel touches every byte: each field should"
                     " load and store as whole float4 runs, one per array (README: \"The counter-case: a kernel that touches every field\")";
  else
    note("n = " + std::to_string(n) + ": " + r.text);
}

/// The conversions (AoS to the layout and back: 64 bytes read and 64 written per particle each)
/// against the copy kernel; the slower of the two is judged.
TEST(performance, conversion_bandwidth) {
  const std::string section = backend_section("performance");
  const int n = gpu_size();
  const double min_fraction = rubric().number(section, "min_fraction_of_copy_conversion");
  TimedData d(n);
  const std::size_t floats4 = 4 * static_cast<std::size_t>(n);
  kit::TimedCall to_call("particles_to_layout", 2), back_call("particles_from_layout", 2);
  const Particle* aos = to_call.rotated<Particle>({&d.particles[0], &d.particles[1]});
  float4* written = to_call.output<float4>(floats4);
  to_call.check<float4>(written, floats4, d.store(), 0.0, "store");
  // Back: each set's store (made untimed) must give its particles back, bit for bit.
  const float4* store = back_call.rotated<float4>(floats4, d.store());
  Particle* back = back_call.output<Particle>(static_cast<std::size_t>(n));
  back_call.check<Particle>(back, {&d.particles[0], &d.particles[1]}, 0.0, "aos");
  const kit::Work work{64.0 * n, 64.0 * n, 0};
  const kit::Ratio to = bandwidth_vs_copy("particles_to_layout", min_fraction, 128.0 * n, to_call,
                                          [&] { particles_to_layout(aos, written, n); }, work);
  const kit::Ratio from = bandwidth_vs_copy("particles_from_layout", min_fraction, 128.0 * n, back_call,
                                            [&] { particles_from_layout(store, back, n); }, work);
  if (defence_enabled("timed-outputs")) check_round_trip(std::min(n, 1 << 20));
  const kit::Ratio& worse = to.value <= from.value ? to : from;
  const std::string text = "n = " + std::to_string(n) + ": " + to.text + "; " + from.text;
  Measured(worse.value, min_fraction, "of copy bandwidth (the slower conversion)")
      .suggest("min_fraction_of_copy_conversion", 0.75)
      .judge(text,
             std::string("\nbelow ") + kit::num(min_fraction) + " of the copy bandwidth\n  hint: a thread per particle reads (or writes) 64 bytes apart on the AoS"
                     " side; stage a tile in shared memory so both sides move consecutive float4 (README: \"Converting AoS to SoA\")");
}

#endif
