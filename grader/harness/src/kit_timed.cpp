// The lab kit's timed calls of the code under test (gpulab/grade/kit.hpp, TimedCall): input sets
// taking turns in the same buffers, a random sample of the timed runs' outputs checked by the
// judge, and the physical floor of a call's time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "gpulab/grade/defences.hpp"
#include "gpulab/grade/harness.hpp"
#include "gpulab/grade/kit.hpp"
#include "gpulab/grade/perfmodel.hpp"
#include "gpulab/host.hpp"
#include "kit_record.hpp"

using nlohmann::json;

namespace gpulab::grade::kit {

namespace {

/// Elements of a checked buffer read back after a sampled run, and the most runs sampled.
constexpr std::size_t kWindow = 64;
constexpr std::size_t kSampledRuns = 256;

/// Judge: addresses handed out for the arguments, distinct, never dereferenced.
void* placeholder() {
  static std::uintptr_t next = 0x9000000;
  return reinterpret_cast<void*>(next += 0x1000);
}

}  // namespace

struct TimedCall::State {
  std::string name;
  int sets = 1;
  struct Rotated {
    void* device = nullptr;
    std::vector<void*> sets;  ///< runner: each set's copy on the device
    std::size_t bytes = 0;
  };
  struct Output {
    void* device = nullptr;
    std::size_t bytes = 0;
  };
  struct Check {
    const void* device;
    std::vector<const void*> expected;  ///< host, per set; empty: `produced` holds them
    std::size_t n, elem;
    int kind;  ///< 0: bits, 1: floats, 2: doubles
    double tolerance;
    bool relative;  ///< tolerance times the expected value's magnitude
    std::string name;
    std::vector<void*> produced;  ///< runner: per set, made on the device
  };
  std::vector<Rotated> rotated;
  std::vector<Output> outputs;
  std::vector<Check> checks;
  std::string setup_error;
};

TimedCall::TimedCall(std::string name, int sets) : s_(std::make_unique<State>()) {
  s_->name = std::move(name);
  s_->sets = std::max(1, sets);
}

TimedCall::~TimedCall() {
  if (judging()) return;
  for (auto& r : s_->rotated) {
    device_free(r.device);
    for (void* p : r.sets) device_free(p);
  }
  for (auto& o : s_->outputs) device_free(o.device);
  for (auto& c : s_->checks)
    for (void* p : c.produced) device_free(p);
}

namespace {
/// Runner: a buffer per set, made on the device by `produce`.
std::vector<void*> produce_sets(int sets, std::size_t bytes, const TimedCall::Producer& produce) {
  std::vector<void*> out;
  for (int set = 0; set < sets; ++set) {
    out.push_back(device_malloc(std::max<std::size_t>(bytes, 1)));
    fill_bytes(out.back(), 0xFF, bytes);  // as the timed runs' outputs: bytes nobody writes compare equal
    produce(set, out.back());
  }
  synchronize();
  return out;
}
}  // namespace

void* TimedCall::add_produced(std::size_t bytes, const Producer& produce) {
  if (judging() || !s_->setup_error.empty()) return placeholder();
  State::Rotated r;
  r.bytes = bytes;
  try {
    r.device = device_malloc(std::max<std::size_t>(bytes, 1));
    r.sets = produce_sets(s_->sets, bytes, produce);
  } catch (const std::exception& e) {
    s_->setup_error = e.what();
  }
  s_->rotated.push_back(r);
  return r.device ? r.device : placeholder();
}

void* TimedCall::add_rotated(const std::vector<const void*>& sets, std::size_t bytes) {
  if (judging() || !s_->setup_error.empty()) return placeholder();
  State::Rotated r;
  r.bytes = bytes;
  try {
    r.device = device_malloc(std::max<std::size_t>(bytes, 1));
    for (const void* host : sets) {
      r.sets.push_back(device_malloc(std::max<std::size_t>(bytes, 1)));
      if (bytes) copy_to_device(r.sets.back(), host, bytes);
    }
  } catch (const std::exception& e) {
    s_->setup_error = e.what();
  }
  s_->rotated.push_back(r);
  return r.device ? r.device : placeholder();
}

void* TimedCall::add_output(std::size_t bytes) {
  if (judging() || !s_->setup_error.empty()) return placeholder();
  State::Output o;
  o.bytes = bytes;
  try {
    o.device = device_malloc(std::max<std::size_t>(bytes, 1));
  } catch (const std::exception& e) {
    s_->setup_error = e.what();
  }
  s_->outputs.push_back(o);
  return o.device ? o.device : placeholder();
}

void TimedCall::add_check(const void* device, const std::vector<const void*>& expected, std::size_t n,
                          std::size_t elem, int kind, double tolerance, const std::string& name,
                          const Producer& produce, bool relative) {
  s_->checks.push_back({device, expected, n, elem, kind, tolerance, relative, name, {}});
  if (!produce || judging() || !s_->setup_error.empty()) return;
  try {
    s_->checks.back().produced = produce_sets(s_->sets, n * elem, produce);
  } catch (const std::exception& e) {
    s_->setup_error = e.what();
  }
}

namespace {

/// Runner: the hooks of TimedCall's runs (RunHooks): the sets' turns, the poison, and the windows
/// of a random sample of the runs (reservoir sampling, so every run is as likely to be kept,
/// drawn from the operating system's entropy: nothing the code under test can predict).
struct Sampler {
  const TimedCall::State& s;
  std::mt19937_64 draw{std::random_device{}()};
  long long runs = 0;
  json samples = json::array();

  void before(int i) {
    for (const auto& r : s.rotated)
      if (r.bytes) copy_device_to_device(r.device, r.sets[static_cast<std::size_t>(i) % r.sets.size()], r.bytes);
    for (const auto& o : s.outputs) fill_bytes(o.device, 0xFF, o.bytes);
  }
  void after(int i) {
    ++runs;
    std::size_t slot = samples.size();
    if (slot >= kSampledRuns) {
      slot = static_cast<std::size_t>(draw() % static_cast<std::uint64_t>(runs));
      if (slot >= kSampledRuns) return;
    }
    json windows = json::array();
    for (const auto& c : s.checks) {
      const std::size_t w = std::min(kWindow, c.n), offset = c.n > w ? draw() % (c.n - w + 1) : 0;
      auto read = [&](const void* device) {
        std::vector<std::uint8_t> bytes(w * c.elem);
        if (!bytes.empty()) copy_to_host(bytes.data(), static_cast<const char*>(device) + offset * c.elem, bytes.size());
        return json::binary(std::move(bytes));
      };
      json window = {{"offset", offset}, {"bytes", read(c.device)}};
      if (!c.produced.empty()) window["expected"] = read(c.produced[static_cast<std::size_t>(i % s.sets)]);
      windows.push_back(window);
    }
    const json sample = {{"run", i}, {"set", i % s.sets}, {"windows", windows}};
    if (slot == samples.size()) samples.push_back(sample);
    else samples[slot] = sample;
  }
};

/// One element of a window against the expected one.
bool element_matches(const TimedCall::State::Check& c, const std::uint8_t* got, const std::uint8_t* want) {
  if (std::memcmp(got, want, c.elem) == 0) return true;
  if (c.kind == 0) return false;
  const std::size_t lane = c.kind == 1 ? 4 : 8;  // a float4 is four floats
  for (std::size_t at = 0; at + lane <= c.elem; at += lane) {
    double g, w;
    if (lane == 4) {
      float a, b;
      std::memcpy(&a, got + at, 4), std::memcpy(&b, want + at, 4);
      g = a, w = b;
    } else {
      std::memcpy(&g, got + at, 8), std::memcpy(&w, want + at, 8);
    }
    const double allowed = c.relative ? c.tolerance * std::fabs(w) : c.tolerance;
    if (std::memcmp(got + at, want + at, lane) != 0 && !(std::isfinite(g) && std::fabs(g - w) <= allowed))
      return false;  // NaN never passes
  }
  return true;
}

std::string element_text(const TimedCall::State::Check& c, const std::uint8_t* p) {
  std::ostringstream os;
  os.precision(9);
  if (c.kind == 1) {
    for (std::size_t at = 0; at + 4 <= c.elem; at += 4) {
      float f;
      std::memcpy(&f, p + at, 4);
      os << (at ? ", " : c.elem > 4 ? "(" : "") << f;
    }
    if (c.elem > 4) os << ")";
  } else if (c.kind == 2) {
    double d;
    std::memcpy(&d, p, 8);
    os << d;
  } else {
    long long v = 0;
    std::memcpy(&v, p, std::min<std::size_t>(c.elem, sizeof v));
    os << (c.elem == 4 ? static_cast<long long>(static_cast<std::int32_t>(v)) : v);
  }
  return os.str();
}

/// Whether `w` is an object holding bytes at `key`.
bool has_binary(const json& w, const char* key) { return w.is_object() && w.contains(key) && w[key].is_binary(); }

/// Judge: window `k` of timed run `run` (input set `set`) against the set's expected result: true
/// when it matches; otherwise, when `first` is empty, `first` says what is wrong.
bool window_matches(const TimedCall::State& s, std::size_t k, const json& window, int run, int set,
                    std::string& first) {
  const auto& c = s.checks[k];
  const std::size_t offset = window.value("offset", std::size_t{0});
  const auto& bytes = window["bytes"].get_binary();
  // Expected: the host's result of the set, or the window of the result made on the device.
  const bool host = !c.expected.empty();
  const std::vector<std::uint8_t> none;
  const auto& made = host || !has_binary(window, "expected") ? none : window["expected"].get_binary();
  const std::uint8_t* want = host ? static_cast<const std::uint8_t*>(c.expected[static_cast<std::size_t>(set)]) +
                                        offset * c.elem
                                  : made.data();
  std::size_t j = 0, count = bytes.size() / c.elem;
  // A window outside the buffer, or without its expected bytes: the record is not the runner's.
  if (offset + count > c.n || (!host && made.size() != bytes.size())) count = 0;
  for (; j < count && element_matches(c, bytes.data() + j * c.elem, want + j * c.elem); ++j) {}
  if (j == count && count == std::min(kWindow, c.n)) return true;
  if (!first.empty()) return false;
  std::ostringstream os;
  os << "timed run " << run << " (input set " << set + 1 << " of " << s.sets << "): ";
  if (j < count)
    os << c.name << "[" << offset + j << "] = " << element_text(c, bytes.data() + j * c.elem) << ", expected "
       << element_text(c, want + j * c.elem)
       << (host ? " (the set's result" : " (the result of an untimed call on the same inputs")
       << (c.kind ? ", within " + std::to_string(c.tolerance) + (c.relative ? " of its magnitude" : "")
                  : std::string(", bit for bit"))
       << ")";
  else
    os << "the window of " << c.name << " read back is not where it should be";
  first = os.str();
  return false;
}

/// Judge: the sampled windows against each set's expected result; fails the check for the runs
/// that did not compute their own result.
void judge_samples(const TimedCall::State& s, const json& e) {
  const json samples = e.value("sampled", json::array());
  long long bad = 0;
  std::string first;
  if (!s.checks.empty() && samples.empty()) {
    bad = 1;
    first = "no timed run's output was read back";
  }
  for (const auto& sample : samples) {
    if (!sample.is_object()) {
      if (bad++ == 0) first = "a timed run's record is not one";
      continue;
    }
    const int run = sample.value("run", -1), set = sample.value("set", 0);
    const json windows = sample.value("windows", json::array());
    const bool whole = std::all_of(windows.begin(), windows.end(), [&](const json& w) { return has_binary(w, "bytes"); });
    if (windows.size() != s.checks.size() || set < 0 || set >= s.sets || !whole) {
      ++bad;
      if (first.empty()) first = "the record of timed run " + std::to_string(run) + " is incomplete";
      continue;
    }
    for (std::size_t k = 0; k < s.checks.size(); ++k) {
      if (window_matches(s, k, windows[k], run, set, first)) continue;
      ++bad;
      break;
    }
  }
  if (bad == 0 || !defence_enabled("timed-runs")) return;
  ADD_FAILURE() << s.name << ": " << bad << " of the " << samples.size() << " timed runs sampled (of "
                << e.value("runs", 0LL) << ") did not compute their own result; first: " << first
                << "\n  hint: every timed call must compute its result from the inputs it is given: the inputs take"
                   " turns in the same buffers, so a result kept from an earlier call (cached by pointer or size) is"
                   " another input's, and work left running past the call or for a later one is not in its result";
}

/// Judge: the median against the physical floor of `work` on the runner's device.
void judge_floor(const std::string& name, const Timing& t, const Work& work, const json& device) {
  const PeakRates peak = perfmodel::peak_rates(device.value("name", std::string()), device.value("memory_clock_hz", 0.0),
                                    device.value("memory_bus_bits", 0), device.value("multiprocessors", 0),
                                    device.value("clock_hz", 0.0), device.value("l2_bytes", 0.0));
  std::string why;
  const double floor_ms = perfmodel::physical_floor_ms(work, peak, why);
  if (floor_ms <= 0 || t.median_ms >= floor_ms || !defence_enabled("physical-floor")) return;
  std::ostringstream os;
  os.precision(3);
  os << name << ": implausibly fast: a median of " << t.median_ms * 1e3 << " us, below the physical floor of "
     << floor_ms * 1e3 << " us (" << why << ")"
     << "\n  hint: no GPU does the call's work faster; the timed runs did less than the call must (a cached or"
        " skipped result, work left running on a stream of its own)";
  ADD_FAILURE() << os.str();
}

json device_properties() {
  const DeviceInfo d = device_info();
  return {{"name", d.name},
          {"memory_clock_hz", d.memory_clock_khz * 1e3},
          {"memory_bus_bits", d.memory_bus_bits},
          {"multiprocessors", d.multiprocessors},
          {"clock_hz", d.clock_khz * 1e3},
          {"l2_bytes", static_cast<double>(d.l2_bytes)}};
}

}  // namespace

Timing TimedCall::time(const std::function<void()>& run, const Work& work) {
  const int seq = record::next_seq();
  if (judging()) {
    const json* e = record::replay("timing", s_->name);
    if (!e) return {};
    if (e->contains("error") && (*e)["error"].is_string()) {
      ADD_FAILURE() << s_->name << ": " << (*e)["error"].get<std::string>();
      return {};
    }
    const Timing t{e->value("median_ms", 0.0), e->value("rse", 1.0), e->value("samples", 0)};
    judge_samples(*s_, *e);
    judge_floor(s_->name, t, work, e->value("device", json::object()));
    return t;
  }
  json ev = {{"type", "timing"}, {"seq", seq}, {"name", s_->name}};
  Timing t{};
  Sampler sampler{*s_};
  try {
    if (!s_->setup_error.empty()) throw std::runtime_error("preparing the timed runs failed: " + s_->setup_error);
    ev["device"] = device_properties();
    t = time_device(s_->name, [&](int) { run(); },
                    RunHooks{[&](int i) { sampler.before(i); }, [&](int i) { sampler.after(i); }});
  } catch (const std::exception& ex) {
    ev["error"] = std::string("timing failed: ") + ex.what();
  }
  ev["median_ms"] = t.median_ms;
  ev["rse"] = t.rse;
  ev["samples"] = t.samples;
  ev["runs"] = sampler.runs;
  ev["sampled"] = sampler.samples;
  record::send(ev);
  return t;
}

}  // namespace gpulab::grade::kit
