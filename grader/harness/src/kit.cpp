// The lab kit (gpulab/grade/kit.hpp): calls of the code under test, recorded by the runner and
// judged by the trusted judge with the rules every lab shares.
#include "gpulab/grade/kit.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "gpulab/grade/defences.hpp"
#include "gpulab/grade/harness.hpp"
#include "gpulab/grade/perfmodel.hpp"
#include "gpulab/host.hpp"
#include "kit_record.hpp"
#if defined(GPULAB_BUILD_BACKEND_EMU)
#include "gpulab/emu/metrics.hpp"
#include "gpulab/emu/runtime.hpp"
#if __has_include("gpulab/emu/watch.hpp")
#include "gpulab/emu/watch.hpp"
#define GPULAB_KIT_WATCH 1
#endif
#endif

using nlohmann::json;

namespace gpulab::grade::kit {
namespace {

/// A failure of a rule every lab shares (guard zone, inputs unchanged, work done by kernels...):
/// fails the running check like ADD_FAILURE, and tells the harness, so that a check whose own
/// value passes (e.g. "0 wrong calls") says why it failed all the same.
#define KIT_RULE_FAILURE() ::gpulab::grade::rule_broken(), ADD_FAILURE()

/// A digest of an input's bytes, to see whether a call changed them: four independent 64-bit
/// lanes of multiply-and-rotate over 8-byte words, then the last words and bytes and a final mix of
/// the lanes and the length. A GiB takes 0.13 s on a 2-core machine like CI's, where byte-wise
/// FNV-1a took 1.2 s; every input is digested before its call (runner and judge) and after it
/// (docs/results/lab04-host-bench.py measures both).
std::uint64_t content_hash(const void* data, std::size_t n) {
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t h[4] = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull, 0xA4093822299F31D0ull, 0x082EFA98EC4E6C89ull};
  auto mix = [](std::uint64_t x, std::uint64_t w) {
    x = (x ^ w) * kMul;
    return (x << 29) | (x >> 35);
  };
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; ++k) {
      std::uint64_t w;
      std::memcpy(&w, p + i + 8 * k, 8);
      h[k] = mix(h[k], w);
    }
  for (int k = 0; i + 8 <= n; i += 8, ++k) {  // up to 3 more whole words
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    h[k] = mix(h[k], w);
  }
  std::uint64_t tail = 0;  // the last 0-7 bytes
  for (; i < n; ++i) tail = (tail << 8) | p[i];
  std::uint64_t out = mix(mix(mix(mix(h[0], h[1]), h[2]), h[3]), tail) ^ n;
  out ^= out >> 31;
  return out * kMul;
}

/// Bytes an output holds before the call (NaN as a float, -1 as an integer: never a right answer),
/// and the guard zone after it. They differ, so that a store past the end is seen whatever it
/// stores: an off-by-one thread that reads past its input gets the poison (NaN) and would store it
/// back unseen into a guard of the same bytes.
constexpr unsigned char kPoisonByte = 0xFF;
constexpr unsigned char kGuardByte = 0xA5;

/// Placeholder addresses handed out in the judge: distinct, never dereferenced.
void* placeholder() {
  static std::uintptr_t next = 0x100000;
  next += 0x1000;
  return reinterpret_cast<void*>(next);
}

[[maybe_unused]] std::string bytes_text(double b) {
  std::ostringstream os;
  os.precision(3);
  if (b >= 1 << 20) os << b / (1 << 20) << " MiB";
  else if (b >= 1 << 10) os << b / (1 << 10) << " KiB";
  else os << b << " bytes";
  return os.str();
}

}  // namespace

double MetricRow::efficiency() const {
  if (!units) return 1.0;
  if (shared) return static_cast<double>(ideal_units) / static_cast<double>(units);
  return std::min(1.0, static_cast<double>(bytes_requested) / (32.0 * static_cast<double>(units)));
}

struct Call::State {
  std::string what;
  struct Input {
    std::string name;
    const void* host;
    std::size_t bytes;
    bool must_read;
    std::uint64_t hash;
    void* device = nullptr;
  };
  struct Output {
    std::string name;
    std::size_t bytes, elem;
    void* device = nullptr;
    std::vector<unsigned char> result;
    std::vector<unsigned char> before;  ///< runner: the bytes it held before the call
  };
  std::vector<Input> inputs;
  std::vector<Output> outputs;
  Evidence evidence;
  std::vector<Finding> findings;
  std::vector<MetricRow> metrics;
  bool ran = false;
  std::size_t guard = kGuard;  ///< guard elements after each output (0: none)
  std::string setup_error;     ///< runner: preparing the inputs/outputs failed (e.g. a lost GPU context)
  Slots* slots = nullptr;      ///< where the inputs and outputs live (null: buffers of the call's own)
  bool shared = false;         ///< share_across_checks: a later check's same call takes this record
};

Call::Call(std::string what, bool guard) : s_(std::make_unique<State>()) {
  s_->what = std::move(what);
  s_->guard = guard ? kGuard : 0;
}

Call::Call(std::string what, Slots& slots, bool guard) : Call(std::move(what), guard) { s_->slots = &slots; }

Call::~Call() {
  // Placeholders are not device memory; slots own theirs.
  if (judging() || !s_->setup_error.empty() || s_->slots) return;
  for (auto& i : s_->inputs) device_free(i.device);
  for (auto& o : s_->outputs) device_free(o.device);
}

const Evidence& Call::evidence() const { return s_->evidence; }
double Call::io_bytes() const {
  double bytes = 0;
  for (const auto& i : s_->inputs) bytes += static_cast<double>(i.bytes);
  for (const auto& o : s_->outputs) bytes += static_cast<double>(o.bytes);
  return bytes;
}
const std::vector<Finding>& Call::findings() const { return s_->findings; }
const std::vector<MetricRow>& Call::metrics() const { return s_->metrics; }
const std::string& Call::what() const { return s_->what; }

const void* Call::add_input(const void* host, std::size_t bytes, const std::string& name, bool must_read) {
  State::Input in{name, host, bytes, must_read, content_hash(host, bytes)};
  if (judging() || !s_->setup_error.empty()) {
    in.device = placeholder();
    s_->inputs.push_back(in);
    return in.device;
  }
  try {
    in.device = s_->slots ? s_->slots->take(name, bytes) : device_malloc(std::max<std::size_t>(bytes, 1));
    if (bytes) copy_to_device(in.device, host, bytes);
  } catch (const std::exception& e) {
    // Recorded as the call's error: the judge then says why the call could not be made.
    s_->setup_error = e.what();
    if (!in.device) in.device = placeholder();
    s_->inputs.push_back(in);
    return in.device;
  }
#if defined(GPULAB_KIT_WATCH)
  if (!judging()) emu::label_device_memory(in.device, name);
#endif
  s_->inputs.push_back(in);
  return in.device;
}

void* Call::add_output(std::size_t bytes, std::size_t elem, const std::string& name, const void* initial) {
  State::Output out{name, bytes, elem, nullptr, {}, {}};
  const std::size_t total = bytes + s_->guard * elem;
  if (judging() || !s_->setup_error.empty()) {
    out.device = placeholder();
    s_->outputs.push_back(std::move(out));
    return s_->outputs.back().device;
  }
  try {
    out.device = s_->slots ? s_->slots->take(name, total) : device_malloc(total);
    fill_bytes(out.device, kPoisonByte, bytes);
    if (total > bytes) fill_bytes(static_cast<char*>(out.device) + bytes, kGuardByte, total - bytes);
    if (initial && bytes) copy_to_device(out.device, initial, bytes);
    out.before.assign(bytes, kPoisonByte);
    if (initial && bytes) std::memcpy(out.before.data(), initial, bytes);
#if defined(GPULAB_KIT_WATCH)
    emu::label_device_memory(out.device, name);
#endif
  } catch (const std::exception& e) {
    s_->setup_error = e.what();
    if (!out.device) out.device = placeholder();
  }
  s_->outputs.push_back(std::move(out));
  return s_->outputs.back().device;
}

const std::vector<unsigned char>& Call::output_bytes(const void* output) const {
  for (const auto& o : s_->outputs)
    if (o.device == output) return o.result;
  throw std::logic_error("kit::Call::result: not an output of " + s_->what);
}

namespace {

#if defined(GPULAB_BUILD_BACKEND_EMU)
/// The emulator's view of the call just made (runner only).
/// Where the call's work happened, as every emulator build sees it (tracing or not): launches,
/// the copy API's writes into the outputs and uploads, copies of device memory to the host, and
/// host code's direct loads and stores of device memory (the gate: gpulab/emu/runtime.hpp).
json host_work_evidence(const std::vector<Call::State::Output>& outs, std::size_t guard) {
  json writes = json::array(), uploads = json::array(), downloads = json::array(), accesses = json::array();
  for (const auto& w : emu::host_writes()) {
    const std::string how = w.how;
    // (cudaMemcpyToSymbol into __constant__ / __device__ variables: constants, host data by nature)
    const bool symbol = how.rfind("cudaMemcpyToSymbol", 0) == 0;
    if (how == "copy_to_device" ||
        (how.rfind("cudaMemcpy", 0) == 0 && !symbol && how.find("device to device") == std::string::npos))
      uploads.push_back(how + " uploaded " + bytes_text(static_cast<double>(w.bytes)) + " of host data at " +
                        where(w.file, w.line));
    for (const auto& o : outs) {
      const auto b = reinterpret_cast<std::uintptr_t>(o.device);
      if (w.dst < b + o.bytes + guard * o.elem && b < w.dst + w.bytes)
        writes.push_back(w.how + " wrote " + bytes_text(static_cast<double>(w.bytes)) + " into " + o.name + " at " +
                         where(w.file, w.line));
    }
  }
  for (const auto& r : emu::host_reads())
    downloads.push_back(r.how + " copied " + bytes_text(static_cast<double>(r.bytes)) + " of device memory to the host at " +
                        where(r.file, r.line));
  for (const auto& a : emu::host_accesses())
    accesses.push_back(where(a.file, a.line) + ": host code " + (a.store ? "stored to" : "loaded from") +
                       " device memory directly (" + std::to_string(a.count) + (a.count == 1 ? " time)" : " times)"));
  return {{"launches", emu::kernel_launches()}, {"host_writes", writes}, {"host_uploads", uploads},
          {"host_downloads", downloads}, {"host_accesses", accesses}};
}

json emulator_evidence(const std::vector<Call::State::Input>& ins, const std::vector<Call::State::Output>& outs,
                       std::size_t guard) {
#if !defined(GPULAB_KIT_WATCH)
  (void)ins;
  (void)outs;
  (void)guard;
  return {{"available", false}};
#else
  json ev = {{"available", emu::watch_available()}, {"host_work", host_work_evidence(outs, guard)}};
  if (!emu::watch_available()) return ev;
  ev["load_sectors"] = emu::kernel_load_sectors();
  ev["store_sectors"] = emu::kernel_store_sectors();
  ev["barriers"] = emu::kernel_barriers();
  ev["shuffles"] = emu::kernel_shuffles();
  json shapes = json::array();
  for (const auto& l : emu::launch_shapes()) {
    const emu::LaunchCounts& c = l.counts;
    json counts = json::object();
    for (const emu::LaunchCountField& f : emu::kLaunchCountFields) counts[f.name] = c.*f.member;
    namespace in = emu::instr;
    for (const auto& [name, k] : std::initializer_list<std::pair<const char*, int>>{
             {"fp32", in::fp32}, {"fma", in::fma32}, {"fp64", in::fp64}, {"integer", in::integer}, {"load", in::load},
             {"store", in::store}, {"branch", in::branch}, {"convert", in::convert}, {"special", in::special},
             {"total", in::total}})
      counts[name] = c.instructions[k];
    shapes.push_back({{"blocks", l.blocks}, {"threads", l.threads_per_block}, {"sectors", l.sectors},
                      {"dynamic_shared", l.dynamic_shared_bytes}, {"max_block_sectors", l.max_block_sectors},
                      {"counts", counts}});
  }
  ev["launch_shapes"] = shapes;
  json read = json::array(), written = json::array(), changed = json::array();
  // 64-byte granules touched: what an H200's DRAM moves at least (perfmodel.hpp, dram_granule).
  constexpr std::size_t granule = 64;
  long long touched = 0;
  for (const auto& i : ins) {
    read.push_back(i.bytes ? emu::kernel_read_bytes(i.device, i.bytes) : 0);
    touched += i.bytes ? static_cast<long long>(emu::kernel_read_granules(i.device, i.bytes, granule)) : 0;
  }
  for (const auto& o : outs)  // an in-out argument (C of a GEMM, particles stepped in place) is read too
    touched += o.bytes ? static_cast<long long>(emu::kernel_written_granules(o.device, o.bytes, granule) +
                                                emu::kernel_read_granules(o.device, o.bytes, granule))
                       : 0;
  ev["touched_bytes"] = touched * static_cast<long long>(granule);
  for (const auto& o : outs) {
    written.push_back(o.bytes ? emu::kernel_written_bytes(o.device, o.bytes) : 0);
    // Bytes that differ after the call: whatever changed them, kernels must have written at least
    // that many (host code's libc memcpy into a device pointer is not traced, but shows here).
    std::vector<unsigned char> now(o.bytes);
    if (o.bytes) copy_to_host(now.data(), o.device, o.bytes);
    std::size_t n = 0;
    for (std::size_t i = 0; i < o.bytes; ++i) n += now[i] != o.before[i];
    changed.push_back(n);
  }
  ev["input_bytes_read"] = read;
  ev["output_bytes_written"] = written;
  ev["output_bytes_changed"] = changed;
  return ev;
#endif
}

json emulator_findings() {
  json out = json::array();
  for (const auto& f : emu::findings()) out.push_back({{"kind", f.kind}, {"message", f.message}, {"count", f.count}});
  return out;
}

json emulator_metrics() {
  json out = json::array();
  for (const auto& m : emu::metrics_by_line())
    out.push_back({{"launch", m.launch}, {"where", where(m.file, m.line)}, {"shared", m.shared}, {"store", m.store},
                   {"atomic", m.atomic}, {"requests", m.requests}, {"bytes_requested", m.bytes_requested},
                   {"units", m.units}, {"ideal_units", m.ideal_units}, {"lane_stride", m.lane_stride_bytes}});
  return out;
}
#endif

/// Runs the code under test and describes what it did (the runner's half of Call::run).
json execute(const std::string& what, const std::function<void()>& code, std::vector<Call::State::Input>& ins,
             std::vector<Call::State::Output>& outs, std::size_t guard) {
  json e = {{"type", "call"}, {"what", what}, {"error", nullptr}};
#if defined(GPULAB_BUILD_BACKEND_EMU)
  emu::reset_findings();
  emu::reset_metrics();
  emu::cuda_reset_errors();  // each call starts on a device without an error, whatever the last did
#if defined(GPULAB_KIT_WATCH)
  emu::begin_watch();
#endif
#endif
  try {
    code();
    synchronize();
  } catch (const std::exception& ex) {
    // A fault surfaces at the kit's own synchronize: name the call, not this file.
    std::string m = ex.what();
    const auto here = m.find("kit.cpp:");
    if (here != std::string::npos && here < 300 && m.find(": ", here) != std::string::npos)
      m = "after it returned, " + m.substr(m.find(": ", here) + 2);
    e["error"] = m;
  } catch (...) {
    e["error"] = "the code under test threw an exception that is not a std::exception";
  }
#if defined(GPULAB_BUILD_BACKEND_EMU)
  // A fault that the CUDA shim took (a later launch, copy or cudaDeviceSynchronize of the call
  // returned it as the sticky error, and the code went on) is the call's fault all the same.
  if (e["error"].is_null())
    if (const emu::KernelFault f = emu::cuda_sticky_fault(); !f.kind.empty())
      e["error"] = "a kernel faulted (" + f.kind + "):\n  " + f.message;
#if defined(GPULAB_KIT_WATCH)
  emu::end_watch();
#endif
  e["evidence"] = emulator_evidence(ins, outs, guard);
  e["findings"] = emulator_findings();
  e["metrics"] = emulator_metrics();
#endif
  json results = json::array(), hashes = json::array();
  try {
    for (auto& o : outs) {
      std::vector<std::uint8_t> b(o.bytes + guard * o.elem);
      copy_to_host(b.data(), o.device, b.size());
      results.push_back(json::binary(std::move(b)));
    }
    for (auto& i : ins) {
      std::vector<unsigned char> b(i.bytes);
      if (i.bytes) copy_to_host(b.data(), i.device, i.bytes);
      hashes.push_back(content_hash(b.data(), b.size()));
    }
  } catch (const std::exception& ex) {
    if (e["error"].is_null()) e["error"] = std::string("reading the results back failed: ") + ex.what();
  }
  e["outputs"] = results;
  e["inputs_hash"] = hashes;
  return e;
}

}  // namespace

namespace {

/// Runner: where a fault left the GPU unusable ("<check>: <error>"), or empty. A GPU's faults
/// (illegal or misaligned address, a trap) are sticky: every later API call of the process fails
/// with the same error, so the later checks say where it happened instead of failing obscurely.
std::string& context_lost() {
  static std::string where;
  return where;
}

void note_if_context_lost(const std::string& error) {
#if defined(GPULAB_BUILD_BACKEND_EMU)
  (void)error;
#else
  if (!context_lost().empty()) return;
  try {
    void* probe = device_malloc(1);
    device_free(probe);
    synchronize();
  } catch (const std::exception&) {
    context_lost() = record::current_check() + ": " + error;
  }
#endif
}

}  // namespace

namespace {

/// Judge: fails the running check on a broken rule about where the work happened, and tells the
/// report (info "host_work"), so that a GPU grade, which reads the emulator's grade of the same
/// hand-in, fails it too (grader/src/labs.cpp, host_work_check).
void host_work_failure(const std::string& text) {
  KIT_RULE_FAILURE() << text;
  info("host_work", text.substr(0, text.find('\n')));
}

/// Judge: the rules every lab shares on where a call's work happens (on the device, by kernels,
/// and the host only launching it), from what every emulator build records, traced or not.
void judge_host_work(const std::string& what, const json& hw, std::size_t output_bytes, Evidence& E) {
  E.launches = hw.value("launches", 0LL);
  E.host_writes = hw.value("host_writes", std::vector<std::string>{});
  E.host_accesses = hw.value("host_accesses", std::vector<std::string>{});
  E.host_downloads = hw.value("host_downloads", std::vector<std::string>{});
  if (defence_enabled("kernel-outputs")) {
    if (E.launches == 0 && output_bytes > 0 && record::first_time("no kernel"))
      host_work_failure(what + " ran no kernel (no block of any kernel ran): the results must be computed by kernels on"
                               " the device\n  hint: a launch with a grid of 0 blocks runs nothing (round the block count"
                               " up); computing on the host and copying the results is not the lab");
    for (const auto& w : E.host_writes) {
      if (!record::first_time("host write")) break;
      host_work_failure(what + ": " + w + ": the outputs must be written by kernels, not by host copies during the call");
    }
  }
  if (defence_enabled("device-to-host"))
    for (const auto& d : E.host_downloads) {
      if (!record::first_time("download")) break;
      host_work_failure(what + ": " + d +
                        " during the call: the function must only launch work (the contract), and whatever the host "
                        "reads back is what host code would compute with\n  hint: keep every step on the device: "
                        "a kernel can read what another kernel wrote, and the caller synchronises");
    }
  if (defence_enabled("host-access") && !E.host_accesses.empty() && record::first_time("host access")) {
    std::ostringstream os;
    for (std::size_t i = 0; i < E.host_accesses.size() && i < 3; ++i) os << "\n  " << E.host_accesses[i];
    host_work_failure(what + ": host code dereferenced device memory (on a GPU this is an illegal address):" + os.str() +
                      "\n  hint: on a GPU the host cannot read or write a device pointer; copy with"
                      " gpulab::copy_to_host / copy_to_device outside your function, and compute in kernels");
  }
}

/// Judge: the traced part of a call's evidence (a clang-built emulator).
void read_traced_evidence(const json& ev, Evidence& E) {
  E.load_sectors = ev.value("load_sectors", 0LL);
  E.store_sectors = ev.value("store_sectors", 0LL);
  E.barriers = ev.value("barriers", 0LL);
  E.shuffles = ev.value("shuffles", 0LL);
  E.touched_bytes = ev.value("touched_bytes", 0LL);
  for (const auto& l : ev.value("launch_shapes", json::array())) {
    if (!l.is_object()) continue;
    Evidence::Launch launch;
    auto integer = [](const json& v) { return v.is_number_integer() ? v.get<long long>() : 0LL; };
    launch.blocks = integer(l.value("blocks", json()));
    launch.threads_per_block = integer(l.value("threads", json()));
    launch.sectors = integer(l.value("sectors", json()));
    launch.dynamic_shared_bytes = integer(l.value("dynamic_shared", json()));
    launch.max_block_sectors = integer(l.value("max_block_sectors", json()));
    const json counts = l.value("counts", json::object());
    if (counts.is_object())
      for (const auto& [name, v] : counts.items()) launch.counts[name] = integer(v);
    E.launch_shapes.push_back(std::move(launch));
  }
  E.input_bytes_read = ev.value("input_bytes_read", std::vector<std::uint64_t>{});
  E.output_bytes_written = ev.value("output_bytes_written", std::vector<std::uint64_t>{});
}

/// Runner: the records of calls shared across checks (Call::share_across_checks), by what makes
/// two calls the same: the name, each input's name, size and digest, each output's name, size,
/// element size and bytes before the call, the guard zone. With the check that made each.
struct SharedCall {
  std::string check;
  json event;
};
std::map<std::string, SharedCall>& shared_calls() {
  static std::map<std::string, SharedCall> calls;
  return calls;
}
std::string shared_call_key(const Call::State& s) {
  std::ostringstream k;
  k << s.what << '\n' << s.guard;
  for (const auto& i : s.inputs) k << "\ni " << i.name << ' ' << i.bytes << ' ' << i.hash;
  for (const auto& o : s.outputs)
    k << "\no " << o.name << ' ' << o.bytes << ' ' << o.elem << ' ' << content_hash(o.before.data(), o.before.size());
  return k.str();
}

/// The call's record: the runner's, made here and sent (the code under test run, or why it was
/// not; or an earlier check's record of the same shared call), or the judge's replay of it (null
/// when the record lacks it: reported).
const json* call_record(Call::State& s, const std::function<void()>& code_under_test, json& e) {
  const int seq = record::next_seq();
  if (judging()) return record::replay("call", s.what);
  const bool shared = s.shared && !s.slots && s.setup_error.empty() && context_lost().empty();
  const std::string key = shared ? shared_call_key(s) : std::string();
  const auto earlier = shared ? shared_calls().find(key) : shared_calls().end();
  if (earlier != shared_calls().end() && earlier->second.check != record::current_check()) {
    e = earlier->second.event;
  } else if (!context_lost().empty()) {
    e = {{"type", "call"}, {"what", s.what}, {"error", "not run: the GPU context was lost in " + context_lost()}};
  } else if (!s.setup_error.empty()) {
    e = {{"type", "call"}, {"what", s.what},
         {"error", "the grader could not prepare this call (the code under test was not called): " +
                       s.setup_error}};
  } else {
    e = execute(s.what, code_under_test, s.inputs, s.outputs, s.guard);
    if (!e["error"].is_null()) note_if_context_lost(e["error"].get<std::string>());
    if (shared) shared_calls().emplace(key, SharedCall{record::current_check(), e});
  }
  e["seq"] = seq;
  record::send(e);
  return &e;
}

/// The call's findings and its error, if it raised one (reported): false when it did.
bool take_findings_and_error(Call::State& s, const json& r) {
  // The findings first: a call stopped by a fault (an access outside its memory) still has them.
  for (const auto& f : r.value("findings", json::array()))
    s.findings.push_back({f.value("kind", ""), f.value("message", ""), f.value("count", 0LL)});
  if (!r["error"].is_null()) {
    // The same fault at the same place (an emulator fault names its file:line first) is said once
    // per check, however many calls meet it.
    const std::string error = r["error"].get<std::string>();
    const auto at = error.find("):\n  ");
    const std::string place = at == std::string::npos ? error : error.substr(0, error.find(": ", at + 4));
    if (record::first_time("error " + place)) ADD_FAILURE() << s.what << " failed: " << error;
    else ADD_FAILURE() << s.what << " failed the same way";
    return false;
  }
  return true;
}

/// The outputs' bytes after the call, with the rules on their guard zones and on the inputs
/// (unchanged): false when the record is incomplete (reported).
bool take_outputs(Call::State& s, const json& r) {
  const auto& outs = r.value("outputs", json::array());
  const auto& hashes = r.value("inputs_hash", json::array());
  if (outs.size() != s.outputs.size() || hashes.size() != s.inputs.size()) {
    ADD_FAILURE() << "the record of " << s.what << " is incomplete";
    return false;
  }
  for (std::size_t k = 0; k < s.outputs.size(); ++k) {
    auto& o = s.outputs[k];
    const auto& b = outs[k].get_binary();
    if (b.size() != o.bytes + s.guard * o.elem) {
      ADD_FAILURE() << "the record of " << s.what << " has a wrong size for " << o.name;
      return false;
    }
    o.result.assign(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(o.bytes));
    for (std::size_t i = o.bytes; i < b.size(); ++i)
      if (b[i] != kGuardByte && record::first_time("guard " + o.name)) {
        const std::size_t elem = i / o.elem;
        KIT_RULE_FAILURE() << s.what << " wrote " << o.name << "[" << elem << "], past its last element ("
                      << o.bytes / o.elem - 1 << ")\n  hint: threads (or blocks) beyond the end must not store;"
                      << " guard the store with the size";
        break;
      }
  }
  for (std::size_t k = 0; k < s.inputs.size(); ++k)
    if (hashes[k].get<std::uint64_t>() != s.inputs[k].hash && record::first_time("input " + s.inputs[k].name)) {
      KIT_RULE_FAILURE() << s.what << " modified the input " << s.inputs[k].name << "; it must only read it";
    }
  return true;
}

/// The emulator's per-line metrics of the call.
void take_metrics(Call::State& s, const json& r) {
  for (const auto& m : r.value("metrics", json::array())) {
    MetricRow row;
    row.launch = m.value("launch", "");
    row.where = m.value("where", "");
    row.shared = m.value("shared", false);
    row.store = m.value("store", false);
    row.atomic = m.value("atomic", false);
    row.requests = m.value("requests", 0LL);
    row.bytes_requested = m.value("bytes_requested", 0LL);
    row.units = m.value("units", 0LL);
    row.ideal_units = m.value("ideal_units", 0LL);
    row.lane_stride = m.value("lane_stride", 0LL);
    s.metrics.push_back(row);
  }
}

/// The rule that kernels wrote the outputs: bytes changed during the call that no kernel wrote.
void judge_unseen_writes(const Call::State& s, const json& ev) {
  const Evidence& E = s.evidence;
  const auto changed = ev.value("output_bytes_changed", std::vector<std::uint64_t>{});
  if (defence_enabled("kernel-outputs") && changed.size() == s.outputs.size() &&
      E.output_bytes_written.size() == s.outputs.size())
    for (std::size_t k = 0; k < s.outputs.size(); ++k)
      if (changed[k] > E.output_bytes_written[k] && record::first_time("unseen write " + s.outputs[k].name)) {
        KIT_RULE_FAILURE() << s.what << ": " << changed[k] << " bytes of " << s.outputs[k].name
                      << " changed during the call, but kernels wrote only " << E.output_bytes_written[k]
                      << ": host code wrote the output (e.g. memcpy into a device pointer)"
                      << "\n  hint: on a GPU the host cannot write a device pointer; the outputs must be computed by kernels";
      }
}

/// The rule that kernels read every byte of each input that must be read.
void judge_input_coverage(const Call::State& s) {
  const Evidence& E = s.evidence;
  if (defence_enabled("input-coverage") && E.input_bytes_read.size() == s.inputs.size())
    for (std::size_t k = 0; k < s.inputs.size(); ++k) {
      const auto& in = s.inputs[k];
      if (!in.must_read || E.input_bytes_read[k] >= in.bytes || !record::first_time("coverage " + in.name)) continue;
      std::ostringstream os;
      os.precision(3);
      os << s.what << ": kernels read " << 100.0 * E.input_bytes_read[k] / std::max<std::size_t>(in.bytes, 1)
         << "% of the input " << in.name << " (" << E.input_bytes_read[k] << " of " << in.bytes
         << " bytes), but every element of it matters to the result"
         << "\n  hint: the result must be computed by kernels from the inputs on the device (work done on the host,"
            " or a kernel that skips part of the input, is not the lab)";
      KIT_RULE_FAILURE() << os.str();
    }
}

/// The call's evidence, with the rules every lab shares on where its work happened.
void judge_evidence(Call::State& s, const json& r) {
  const json ev = r.value("evidence", json::object());
  Evidence& E = s.evidence;
  std::size_t output_bytes = 0;
  for (const auto& o : s.outputs) output_bytes += o.bytes;
  if (ev.contains("host_work")) judge_host_work(s.what, ev["host_work"], output_bytes, E);
  E.available = ev.value("available", false);
  if (!E.available) return;
  read_traced_evidence(ev, E);
  judge_unseen_writes(s, ev);
  judge_input_coverage(s);
}

}  // namespace

void Call::share_across_checks() { s_->shared = true; }

bool Call::run(const std::function<void()>& code_under_test) {
  json e;
  const json* got = call_record(*s_, code_under_test, e);
  if (!got) return false;
  const json& r = *got;
  s_->ran = true;
  if (!take_findings_and_error(*s_, r) || !take_outputs(*s_, r)) return false;
  take_metrics(*s_, r);
  judge_evidence(*s_, r);
  // The results are still returned: the caller's comparison adds what is wrong with them.
  return true;
}

Timing time(const std::string& name, const std::function<void(int)>& run) {
  const int seq = record::next_seq();
  if (judging()) {
    const json* e = record::replay("timing", name);
    if (!e) return {};
    if (e->contains("error") && (*e)["error"].is_string()) {
      ADD_FAILURE() << name << ": " << (*e)["error"].get<std::string>();
      return {};
    }
    return {e->value("median_ms", 0.0), e->value("rse", 1.0), e->value("samples", 0)};
  }
  json ev = {{"type", "timing"}, {"seq", seq}, {"name", name}};
  Timing t{};
  if (!context_lost().empty()) {
    ev["error"] = "not timed: the GPU context was lost in " + context_lost();
  } else {
    try {
      t = time_device(name, run);
    } catch (const std::exception& ex) {
      ev["error"] = std::string("timing failed: ") + ex.what();
      note_if_context_lost(ex.what());
    }
  }
  ev["median_ms"] = t.median_ms;
  ev["rse"] = t.rse;
  ev["samples"] = t.samples;
  record::send(ev);
  if (ev.contains("error")) ADD_FAILURE() << name << ": " << ev["error"].get<std::string>();
  return t;
}

double measured(const std::string& name, const std::function<double()>& measure) {
  const int seq = record::next_seq();
  if (judging()) {
    const json* e = record::replay("value", name);
    return e ? e->value("value", NAN) : NAN;
  }
  const double v = measure();
  record::send({{"type", "value"}, {"seq", seq}, {"name", name}, {"value", v}});
  return v;
}

std::vector<float> measured_floats(const std::string& name, const std::function<std::vector<float>()>& compute) {
  const int seq = record::next_seq();
  if (judging()) {
    const json* e = record::replay("floats", name);
    if (!e) return {};
    const auto& b = (*e)["data"].get_binary();
    std::vector<float> out(b.size() / sizeof(float));
    if (!out.empty()) std::memcpy(out.data(), b.data(), out.size() * sizeof(float));
    return out;
  }
  std::vector<float> v = compute();
  std::vector<std::uint8_t> bytes(v.size() * sizeof(float));
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  record::send({{"type", "floats"}, {"seq", seq}, {"name", name}, {"data", json::binary(std::move(bytes))}});
  return v;
}

DeviceData::~DeviceData() {
  for (void* p : owned_) device_free(p);
}
const void* DeviceData::upload_bytes(const void* host, std::size_t bytes) {
  if (judging()) return placeholder();
  void* p = device_malloc(std::max<std::size_t>(bytes, 1));
  owned_.push_back(p);
  if (bytes) copy_to_device(p, host, bytes);
  return p;
}
void* DeviceData::scratch_bytes(std::size_t bytes) {
  if (judging()) return placeholder();
  void* p = device_malloc(std::max<std::size_t>(bytes, 1));
  owned_.push_back(p);
  return p;
}

namespace {

#if defined(GPULAB_BUILD_BACKEND_EMU)
// One line per (kind, file:line), however many calls, blocks and threads met it: the message of
// its first occurrence, with the total count.
struct Seen {
  Finding first;
  long long count = 0;
};

/// The findings of `calls` merged by kind and place, and `total`, how many there were.
std::vector<Seen> merged_findings(const std::vector<const Call*>& calls, long long& total) {
  std::vector<Seen> all;
  total = 0;
  for (const Call* c : calls)
    for (const auto& f : c->findings()) {
      const long long n = std::max(1LL, f.count);
      total += n;
      const std::string at = f.message.substr(0, f.message.find(": "));
      auto it = std::find_if(all.begin(), all.end(), [&](const Seen& s) {
        return s.first.kind == f.kind && s.first.message.substr(0, s.first.message.find(": ")) == at;
      });
      if (it == all.end()) all.push_back({f, n});
      else it->count += n;
    }
  return all;
}

/// Judge: the findings of the emulator's sanitizer in `calls`.
void judge_emulator_findings(const std::vector<const Call*>& calls) {
  // Without load/store tracing (an emulator built by another compiler than clang) no race or
  // stray access is seen: that is "not measured", never "no findings". The judge is built with the
  // runner's emulator, so it knows; the calls' evidence cannot tell (a call that faulted or timed
  // out has none, on any build).
#if defined(GPULAB_KIT_WATCH)
  const bool traced = emu::watch_available();
#else
  const bool traced = false;
#endif
  if (!traced) {
    not_measured("this emulator build traces no memory accesses (it was built without clang), so races and "
                 "out-of-bounds accesses cannot be seen");
    return;
  }
  long long total = 0;
  const std::vector<Seen> all = merged_findings(calls, total);
  if (total == 0 && ::testing::Test::HasFailure()) return;  // a call failed: that is the verdict's reason
  grade::record(static_cast<double>(total), 0, "findings");
  for (std::size_t i = 0; i < all.size() && i < 5; ++i) {
    std::string m = all[i].first.message;
    const auto seen = m.find(" (seen ");  // the emulator's count for one call: replaced by the total
    if (seen != std::string::npos && seen < m.find('\n')) m.erase(seen, m.find(')', seen) + 1 - seen);
    const auto eol = std::min(m.find('\n'), m.size());
    if (all[i].count > 1) m.insert(eol, " (seen " + std::to_string(all[i].count) + " times)");
    ADD_FAILURE() << all[i].first.kind << ": " << m;
  }
  if (all.size() > 5) ADD_FAILURE() << "... and " << all.size() - 5 << " more kinds of finding";
}
#else
/// Judge: the findings of the GPU sanitizer the grader ran, from the file it hands to the judge.
void judge_sanitizer_findings() {
  const std::string& path = options().gpu_findings_path;
  if (path.empty()) {
    not_measured("the grader ran no GPU sanitizer for this check");
    return;
  }
  std::ifstream in(path);
  const json doc = json::parse(in, nullptr, false);
  if (!doc.is_object()) {
    not_measured("the GPU sanitizer's findings (" + path + ") cannot be read");
    return;
  }
  if (doc.contains("not_measured")) {
    not_measured(doc["not_measured"].get<std::string>());
    return;
  }
  long long total = 0;
  const json findings = doc.value("findings", json::array());
  for (const auto& f : findings) total += std::max(1LL, f.value("count", 1LL));
  grade::record(static_cast<double>(total), 0, "findings");
  for (std::size_t i = 0; i < findings.size() && i < 5; ++i) {
    const json& f = findings[i];
    const long long n = f.value("count", 1LL);
    ADD_FAILURE() << f.value("kind", std::string("finding")) << ": " << f.value("message", std::string())
                  << (n > 1 ? " (" + std::to_string(n) + " times)" : "");
  }
  if (findings.size() > 5) ADD_FAILURE() << "... and " << findings.size() - 5 << " more kinds of finding";
}
#endif

}  // namespace

void judge_findings(const std::vector<const Call*>& calls) {
#if defined(GPULAB_BUILD_BACKEND_EMU)
  judge_emulator_findings(calls);
#else
  // A GPU's sanitizer watches the whole lab process, so the grader runs it (compute-sanitizer on
  // the sanitizer checks, grader/src/gpu_sanitizer.cpp) and hands its findings to the judge.
  (void)calls;
  judge_sanitizer_findings();
#endif
}

CopyPrediction predict_fraction_of_copy(const Call& call, const std::string& gpu, double useful_bytes) {
  CopyPrediction out;
  const double bytes = useful_bytes > 0 ? useful_bytes : call.io_bytes();
  const perfmodel::Gpu* g = perfmodel::grading_gpu(gpu, out.why);
  const Evidence& e = call.evidence();
  if (!g) return out;
  if (!e.available || e.launch_shapes.empty()) {
    out.why = e.available ? "no kernel ran" : "this emulator build has no memory-access tracing";
    return out;
  }
  perfmodel::Counts sum;
  for (const auto& l : e.launch_shapes)
    for (const auto& [name, v] : l.counts) sum[name] += static_cast<double>(v);
  // The DRAM moves each granule of the inputs kernels read and of the outputs they wrote at least
  // once; a copy kernel of the call's bytes moves those bytes.
  const perfmodel::Prediction p = perfmodel::predict_roofline(sum, static_cast<double>(e.touched_bytes), *g);
  out.available = p.seconds > 0;
  if (!out.available) out.why = "the call moved nothing";
  out.fraction = out.available ? bytes / g->copy_bytes_per_s / p.seconds : 0;
  out.bound = p.bound;
  out.seconds = p.terms;
  return out;
}

const Evidence::Launch* busiest_launch(const Call& call, long long& total_sectors) {
  total_sectors = 0;
  const Evidence::Launch* busiest = nullptr;
  for (const auto& l : call.evidence().launch_shapes) {
    total_sectors += l.sectors;
    if (!busiest || l.sectors > busiest->sectors) busiest = &l;
  }
  return busiest;
}

namespace {

/// The call's global load requests by source line, "file:line" with the base name as nvcc's copy
/// of the file spells it.
std::map<std::string, long long> load_requests_by_line(const Call& call) {
  std::map<std::string, long long> requests_at;  // "file:line" -> global load requests
  for (const MetricRow& row : call.metrics())
    if (!row.shared && !row.store) {
      // The base name as nvcc's copy of the file spells it (grader/src/handin.cpp, nvcc_input).
      std::string line = row.where.substr(row.where.find_last_of('/') + 1);
      std::replace_if(line.begin(), line.end(), [](char c) { return c == '"' || c == '\\'; }, '_');
      requests_at[line] += row.requests;
    }
  return requests_at;
}

/// Why no read bandwidth is predicted (no such GPU or no measurements of it, no launch, no load
/// group: `why`), and whether the code under test is the reason (ReadPrediction::refused).
void no_read_prediction(ReadPrediction& out, const perfmodel::Gpu* gpu, const std::string& gpu_name,
                        const Evidence::Launch* busiest, std::string why) {
  if (!gpu) out.why = "the model has no GPU named '" + gpu_name + "'";
  else if (!gpu->measured)
    out.why = "the read bandwidth by bytes in flight was measured on an H200 only; the model's " + gpu_name +
              " is public specifications";
  else if (!busiest) out.why = "the emulator recorded no launch shapes for the call";
  else out.why = why.empty() ? "no load in nvcc's PTX is on a line whose loads the emulator counted" : why;
  // The machine's or the model's lack is no fault of the code under test; the rest is.
  out.refused = gpu && gpu->measured && nvcc_view(why) != NvccView::not_on_this_machine;
}

/// The busiest launch's occupancy at the GPU's size and the read bandwidth its bytes in flight
/// reach (ReadPrediction's threads and bytes_per_s); returns the busiest block's bound (0: none).
double predict_in_flight(ReadPrediction& out, const perfmodel::Gpu& gpu, const Evidence::Launch& busiest,
                         const GpuScale* scale, long long static_shared) {
  std::string limit;
  out.threads_per_block = busiest.threads_per_block;
  out.blocks = scale && scale->blocks > 0 ? scale->blocks : static_cast<double>(busiest.blocks);
  const long long tpb = out.threads_per_block;
  const int per_sm = perfmodel::occupancy(gpu, tpb, out.registers, static_shared + busiest.dynamic_shared_bytes, limit);
  out.threads_per_sm = std::min(static_cast<double>(per_sm) * tpb, out.blocks * tpb / gpu.sms);
  const double per_thread = static_cast<double>(out.bytes_per_thread);
  out.bytes_per_s = perfmodel::read_bytes_per_s(gpu, per_thread, out.threads_per_sm);
  // The busiest block alone: its bytes at what one block's loads in flight fetch (Little's law on
  // tpb threads' bytes, as tpb / sms threads on every SM would) bound the launch's time; as a
  // bandwidth, the launch's bytes over that time.
  double block_bound = 0;
  if (scale && scale->busiest_block_sectors > 0 && busiest.sectors > 0) {
    const double alone = perfmodel::read_bytes_per_s(gpu, per_thread, static_cast<double>(tpb) / gpu.sms);
    block_bound = static_cast<double>(busiest.sectors) * scale->work * alone / scale->busiest_block_sectors;
    if (block_bound < out.bytes_per_s) out.bytes_per_s = block_bound, out.busiest_block_bound = true;
  }
  return block_bound;
}

/// ReadPrediction::text: the busiest loads, the busiest launch and what Little's law gives.
std::string read_prediction_text(const ReadPrediction& out, const perfmodel::Gpu& gpu, const Evidence::Launch& busiest,
                                 const GpuScale* scale, double block_bound) {
  const long long tpb = out.threads_per_block;
  const double per_thread = static_cast<double>(out.bytes_per_thread);
  std::ostringstream os;
  os.precision(3);
  os << "the busiest loads (" << out.lines << ", " << out.weight << " warp requests here): each thread loads "
     << out.bytes_per_thread << (out.in_loop ? " bytes per loop trip (" : " bytes (") << out.loads
     << (out.in_loop ? " load(s) in nvcc's PTX" : " load(s) in nvcc's PTX, in no loop") << "); the busiest launch, ";
  if (scale && scale->blocks > 0)
    os << busiest.blocks << " block(s) here and " << out.blocks << " at the GPU's size";
  else
    os << busiest.blocks << " block(s)";
  os << " of " << tpb << " threads, keeps " << out.threads_per_sm << " threads per SM of an " << gpu.name << " busy ("
     << out.registers << " registers each): Little's law gives "
     << perfmodel::read_bytes_per_s(gpu, per_thread, out.threads_per_sm) / 1e9 << " GB/s";
  if (block_bound > 0) {
    os << "; its busiest block moves " << busiest.max_block_sectors << " of its " << busiest.sectors
       << " sectors here (" << scale->busiest_block_sectors << " at the GPU's size), and one block's loads in flight"
       << " fetch them at a pace of " << block_bound / 1e9 << " GB/s of the launch's bytes";
    if (out.busiest_block_bound) os << ": the busiest block sets the time (the other blocks wait on it, or do little)";
  }
  return os.str();
}

}  // namespace

ReadPrediction predict_read_bandwidth(const Call& call, const std::string& gpu_name, const GpuScale* scale) {
  ReadPrediction out;
  long long total = 0;
  const Evidence::Launch* busiest = busiest_launch(call, total);
  std::string why;
  const std::vector<KernelResources> kernels = kernel_resources(why);
  const perfmodel::Gpu* gpu = perfmodel::gpu(gpu_name);
  // The loads that matter: the group (a loop's loads per trip, or the loads in no loop) whose
  // source lines the call's global load requests hit most (perfmodel::busiest_load_group).
  const std::map<std::string, long long> requests_at = load_requests_by_line(call);
  long long static_shared = 0;
  std::vector<const KernelResources::LoadGroup*> groups;
  for (const auto& k : kernels) {
    // Occupancy from the kernels' most (which kernel a launch ran is not recorded).
    out.registers = std::max(out.registers, k.registers);
    static_shared = std::max(static_shared, k.shared_bytes);
    for (const auto& g : k.load_groups) groups.push_back(&g);
  }
  // The call's warps (at this run's warp size; 32 where unknown): the most times a load in no loop
  // can be issued.
  const long long ws = options().warp_size > 0 ? options().warp_size : 32;
  long long warps = 0;
  for (const auto& l : call.evidence().launch_shapes) warps += l.blocks * ((l.threads_per_block + ws - 1) / ws);
  const KernelResources::LoadGroup* group = perfmodel::busiest_load_group(groups, requests_at, out.weight, warps);
  if (!gpu || !gpu->measured || !busiest || !group) {
    no_read_prediction(out, gpu, gpu_name, busiest, why);
    return out;
  }
  out.available = true;
  out.bytes_per_thread = group->bytes;
  out.loads = group->loads;
  out.in_loop = group->in_loop;
  for (const std::string& line : group->lines) out.lines += (out.lines.empty() ? "" : ", ") + line;
  const double block_bound = predict_in_flight(out, *gpu, *busiest, scale, static_shared);
  out.text = read_prediction_text(out, *gpu, *busiest, scale, block_bound);
  return out;
}

namespace {
/// `here` at size n and `other` at other_n, grown to gpu_n as n^k, k in [0, max_k].
double grow(double here, double n, double other, double other_n, double gpu_n, double max_k) {
  if (here <= 0 || other <= 0 || n <= 0 || other_n <= 0 || other_n == n) return here;
  const double k = std::clamp(std::log(other / here) / std::log(other_n / n), 0.0, max_k);
  return here * std::pow(gpu_n / n, k);
}
}  // namespace

GpuScale scale_to_size(const Call& here, double n, const Call& other, double other_n, double gpu_n,
                       double work_exponent) {
  GpuScale s;
  long long total = 0;
  const Evidence::Launch* a = busiest_launch(here, total);
  const Evidence::Launch* b = busiest_launch(other, total);
  if (!a || n <= 0) return s;
  s.work = std::pow(gpu_n / n, work_exponent);
  s.blocks = grow(static_cast<double>(a->blocks), n, b ? static_cast<double>(b->blocks) : 0, other_n, gpu_n, 1.0);
  s.busiest_block_sectors = std::min(
      grow(static_cast<double>(a->max_block_sectors), n, b ? static_cast<double>(b->max_block_sectors) : 0, other_n,
           gpu_n, work_exponent),
      static_cast<double>(a->sectors) * s.work);
  return s;
}

namespace {
/// The details of a predicted fraction of copy that explain a failure: the bytes the kernels
/// touched and moved, the hottest store (bound by the L2) or load, and the bytes in flight.
void explain_copy_prediction(std::ostream& os, const Call& call, double useful_bytes, double read_bytes,
                             const CopyPrediction& p, const ReadPrediction& read, const perfmodel::Gpu& g) {
  const Evidence& e = call.evidence();
  os << "; the kernels touched " << e.touched_bytes << " bytes in 64-byte granules for "
     << static_cast<long long>(useful_bytes) << " bytes needed, and moved " << e.load_sectors << " + "
     << e.store_sectors << " sectors of 32 bytes (loads + stores, counted per request)";
  if (p.bound == "l2") {
    if (const MetricRow* hot = hottest_global_store(call))
      os << "\n" << hot->where << ": the hottest store writes " << hot->per_request() << " sectors per request (ideal "
         << hot->ideal_per_request() << "); neighbouring threads write addresses " << hot->lane_stride << " bytes apart";
  } else if (const MetricRow* hot = hottest_global_load(call)) {
    os << "\n" << hot->where << ": the hottest load uses " << hot->per_request() << " sectors per request (ideal "
       << hot->ideal_per_request() << "); neighbouring threads read addresses " << hot->lane_stride << " bytes apart";
  }
  if (read.available)
    os << "\nbytes in flight: " << read.text << ", " << read_bytes / read.bytes_per_s / (useful_bytes / g.copy_bytes_per_s)
       << " of a copy's time for the " << static_cast<long long>(read_bytes) << " bytes the call reads";
  else
    os << "\nbytes in flight: not predicted (" << read.why << ")";
}
}  // namespace

double judge_predicted_fraction_of_copy(const Call& call, double useful_bytes, double read_bytes, const GpuScale& scale,
                                        double min, const std::string& hint, const std::string& gpu,
                                        double least_bytes) {
  const Evidence& e = call.evidence();
  if (!e.available) {
    not_measured("this emulator build has no memory-access tracing (build the emu preset with clang++)");
    return 0;
  }
  report_metrics(call);
  const CopyPrediction p = predict_fraction_of_copy(call, gpu, useful_bytes);
  std::string unusable;
  const perfmodel::Gpu* g = perfmodel::grading_gpu(gpu, unusable);
  if (!p.available || !g) {
    ADD_FAILURE() << call.what() << ": no prediction: " << (p.available ? unusable : p.why);
    return 0;
  }
  // The least bytes any correct implementation moves cross the DRAM at least once in the time
  // predicted (p.fraction * copy rate is useful_bytes per predicted second).
  const double least = least_bytes > 0 ? least_bytes : useful_bytes;
  if (refuse_implausible(call.what(), *g, 0, p.fraction * g->copy_bytes_per_s * least / useful_bytes)) return 0;
  double fraction = std::min(p.fraction, 1.0);
  std::string bound = p.bound;
  const ReadPrediction read = predict_read_bandwidth(call, gpu, &scale);
  if (!read.available && read.refused && refuse_unpredicted(call.what() + ": the bytes in flight", read.why)) return 0;
  if (read.available && read.bytes_per_s > 0) {
    const double in_flight = useful_bytes / g->copy_bytes_per_s / (read_bytes / read.bytes_per_s);
    if (in_flight < fraction) fraction = in_flight, bound = "bytes in flight";
  }
  grade::record(fraction, min, "of copy bandwidth, predicted for an " + gpu);
  std::ostringstream os;
  os.precision(3);
  os << call.what() << ": predicted " << fraction << " of a copy kernel's bandwidth on an " << gpu << " (bound by "
     << bound << ")";
  const std::string headline = os.str();  // what a passing check shows; the details explain a failure
  explain_copy_prediction(os, call, useful_bytes, read_bytes, p, read, *g);
  if (fraction < min) {
    os << "\nbelow " << min << " of the copy bandwidth";
    // The roofline's own limit, when it fails too, is the first thing to fix.
    if (bound != "bytes in flight" || std::min(p.fraction, 1.0) < min) os << "\n  hint: " << hint;
    if (bound == "bytes in flight")
      os << "\n  hint: too few bytes in flight: each SM needs enough threads, each with loads issued before their"
            " results are used, to cover the DRAM's latency. Launch enough blocks to fill every SM (a few per SM,"
            " growing with the problem), share the work evenly among them, and load wide (float4) or several"
            " elements per loop trip"
            " (docs/results/perfmodel.md, \"Bytes in flight, measured\").";
    ADD_FAILURE() << os.str();
  } else {
    note(headline);
  }
  return fraction;
}


std::vector<KernelResources> kernel_resources(std::string& why) {
  std::vector<KernelResources> out;
  const std::string& path = options().kernel_resources_path;
  if (path.empty()) {
    why = "the grader gave no registers per kernel (run the lab through ./gpulab grade)";
    return out;
  }
  std::ifstream in(path);
  const json doc = json::parse(in, nullptr, false);
  if (!doc.is_object()) {
    why = "the kernels' registers (" + path + ") cannot be read";
    return out;
  }
  if (doc.contains("not_measured")) {
    why = doc.value("not_measured", std::string("no registers per kernel"));
    return out;
  }
  for (const auto& k : doc.value("kernels", json::array())) {
    if (!k.is_object()) continue;
    KernelResources r;
    r.kernel = k.value("kernel", std::string());
    r.registers = k.value("registers", 0);
    r.shared_bytes = k.value("shared_bytes", 0LL);
    for (const auto& g : k.value("load_groups", json::array())) {
      KernelResources::LoadGroup lg;
      lg.bytes = g.value("bytes", 0LL);
      lg.loads = g.value("loads", 0);
      lg.in_loop = g.value("in_loop", false);
      lg.lines = g.value("lines", std::vector<std::string>{});
      lg.places = g.value("places", std::vector<std::string>{});
      r.load_groups.push_back(lg);
    }
    out.push_back(r);
  }
  if (out.empty()) why = "nvcc compiled no kernel from the code under test";
  return out;
}

NvccView nvcc_view(std::string& why) {
  const std::string& path = options().kernel_resources_path;
  std::ifstream in(path);
  const json doc = path.empty() ? json() : json::parse(in, nullptr, false);
  const std::string nvcc = doc.is_object() ? doc.value("nvcc", "") : "";
  if (path.empty() || nvcc == "absent" || nvcc == "unusable") {
    why = path.empty() ? "the grader gave no registers per kernel (run the lab through ./gpulab grade)"
                       : doc.value("not_measured", std::string("no nvcc on this machine"));
    return NvccView::not_on_this_machine;
  }
  if (!kernel_resources(why).empty()) return NvccView::available;
  return NvccView::refused;
}

bool refuse_unpredicted(const std::string& what, const std::string& why) {
  if (!defence_enabled("prediction-required")) return false;
  ADD_FAILURE() << what << ": not predicted: " << why
                << "\nnvcc is on this machine and the prediction needs its view of the file (the registers and loads"
                   " of the kernels a GPU would run); a check the grader cannot compute earns nothing"
                   "\n  hint: make the file compile with nvcc as it is, with its kernels in it (a GPU build would"
                   " refuse it too): nvcc -std=c++17 --extended-lambda -arch=sm_90 -c FILE -I common/include -I labs/<lab>";
  return true;
}

bool refuse_implausible(const std::string& what, const perfmodel::Gpu& gpu, double flops_per_s, double dram_bytes_per_s) {
  const std::string beyond = perfmodel::beyond_ceiling(gpu, flops_per_s, dram_bytes_per_s);
  if (beyond.empty() || !defence_enabled("prediction-ceiling")) return false;
  ADD_FAILURE() << what << ": the prediction is implausible: " << beyond
                << "; no kernel is faster than the GPU itself, so the counts the prediction came from miss work"
                   " (done on the host, or where the emulator does not count)"
                   "\n  hint: do the lab's work in kernels, on device memory, with the code the emulator traces";
  return true;
}

void report_roofline(const Call& call) {
  const CopyPrediction roofline = predict_fraction_of_copy(call, "H200");
  if (roofline.available)
    info("roofline " + call.what(),
         std::to_string(roofline.fraction) + "\t" + roofline.bound + "\t" + std::to_string(call.io_bytes()));
}

void report_metrics(const Call& call) {
  std::ostringstream table;
  std::string launch;
  char buf[256];
  for (const auto& m : call.metrics()) {
    if (m.launch != launch) table << "kernel launched at " << (launch = m.launch) << "\n";
    const std::string kind = std::string(m.shared ? "shared " : "global ") + (m.atomic ? "atomic" : m.store ? "store" : "load");
    std::snprintf(buf, sizeof buf, "  %-28s %-14s %10lld %8.2f (%.2f) %9.1f%%\n", m.where.c_str(), kind.c_str(),
                  m.requests, m.per_request(), m.ideal_per_request(), 100.0 * m.efficiency());
    table << buf;
  }
  info("metrics", table.str());
  report_roofline(call);
  for (const auto& m : call.metrics())
    emit_metric({m.launch, m.where, m.shared ? "shared" : "global", m.atomic ? "atomic" : m.store ? "store" : "load",
                 std::to_string(m.requests), std::to_string(m.per_request()), std::to_string(m.ideal_per_request()),
                 std::to_string(m.efficiency()), std::to_string(m.lane_stride)});
}

namespace {
const MetricRow* hottest_global(const Call& call, bool store) {
  const MetricRow* hot = nullptr;
  for (const auto& m : call.metrics())
    if (!m.shared && m.store == store && !(store && m.atomic) && (!hot || m.units > hot->units)) hot = &m;
  return hot;
}
}  // namespace

const MetricRow* hottest_global_load(const Call& call) { return hottest_global(call, false); }
const MetricRow* hottest_global_store(const Call& call) { return hottest_global(call, true); }

std::string num(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string where(const std::string& file, int line) {
  return file.substr(file.rfind('/') + 1) + ":" + std::to_string(line);
}

Ratio measure_ratio(double threshold, const std::function<Ratio()>& measure) {
  Ratio r = measure();
  if (r.value < threshold && threshold - r.value < 3 * r.noise * threshold) {
    r = measure();
    r.remeasured = true;
    r.text += " (measured twice: the first was within noise of the threshold)";
  }
  return r;
}

}  // namespace gpulab::grade::kit
