// gpulab/grade/kit.hpp - the lab kit: what every lab's checks need, written once.
//
// A lab's checks run twice, as two processes of the same check code:
//
//   the runner  (lab-NN-<impl> --channel FD, in the sandbox): links the code under test. Each
//               kit::Call uploads the inputs, poisons the outputs (0xFF bytes: NaN for floats)
//               with a guard zone after them, calls the code under test and sends everything
//               it did -- the raw outputs, a hash of the inputs after the call, the error it
//               raised, and on the emulator who wrote the outputs, how much of the inputs
//               kernels read, the memory metrics and sanitizer findings -- over a pipe to the
//               grader. It decides nothing.
//   the judge   (lab-NN-solution --replay FILE, trusted, outside the sandbox): runs the same
//               checks with the same seed, so it draws the same inputs, but never calls the code
//               under test: each kit::Call takes what the runner recorded. It compares, applies
//               the thresholds and writes the verdicts. The code under test never runs in the
//               process that decides its grade.
//
// Calls, timings and measured values are matched by (check, sequence number): both processes make
// the same calls in the same order because they run the same code on the same seed.
//
// Typical check:
//   kit::Call call("row_sum(n = " + std::to_string(n) + ")");
//   const float* m = call.input(host_matrix);   // uploaded; must come back unchanged
//   float* sums = call.output<float>(n);        // poisoned, guarded, must be written by kernels
//   if (!call.run([&] { row_sum(m, sums, n); })) return;   // failed: already reported
//   std::vector<float> got = call.result(sums);
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "gpulab/grade/perfmodel.hpp"
#include "gpulab/grade/timing.hpp"

namespace gpulab::grade::kit {

/// Elements after every output that must stay untouched (an off-by-one store lands there).
inline constexpr std::size_t kGuard = 64;

/// True in the judge (replaying a record), false in the runner (running the code under test).
bool judging();

/// The emulator's evidence about one call (empty on GPU back-ends).
struct Evidence {
  bool available = false;           ///< the emulator traced the call (a clang build): the counts below
  /// The rest of this block is recorded by every emulator build (where the work happened).
  long long launches = 0;           ///< kernel launches during the call
  long long load_sectors = 0;       ///< 32-byte sectors moved by kernels' global loads
  long long store_sectors = 0;      ///< ... and stores
  long long barriers = 0;           ///< block-wide barriers completed (one per block and barrier)
  long long shuffles = 0;           ///< warp shuffles (one per warp and shuffle)
  /// Bytes of the 64-byte granules of the inputs kernels read and of the outputs they wrote, plus
  /// those of the outputs they read (in-out arguments), each once: what an H200's DRAM moves at least
  long long touched_bytes = 0;
  /// Each launch of the call, in order: blocks, threads per block, global sectors it moved,
  /// dynamic shared bytes per block, and what a performance model needs (gpulab/emu/watch.hpp's
  /// LaunchCounts, named as the columns of common/emu/passes's tables: fma, fp32, integer, load,
  /// store, branch, convert, special, total, global_load_requests, global_load_sectors,
  /// and each of gpulab::emu::kLaunchCountFields by its name: global_load_requests, ..., shuffles).
  struct Launch {
    long long blocks = 0, threads_per_block = 0, sectors = 0, dynamic_shared_bytes = 0;
    long long max_block_sectors = 0;  ///< the most global sectors one of its blocks moved
    std::map<std::string, long long> counts;
    long long count(const std::string& name) const {
      const auto it = counts.find(name);
      return it == counts.end() ? 0 : it->second;
    }
  };
  std::vector<Launch> launch_shapes;
  std::vector<std::uint64_t> input_bytes_read;     ///< per input: distinct bytes kernels read
  std::vector<std::uint64_t> output_bytes_written; ///< per output: distinct bytes kernels wrote
  std::vector<std::string> host_writes;   ///< "copy_to_device into sums at row_sum.cu:20", ...
  std::vector<std::string> host_accesses; ///< "row_sum.cu:21: host code loaded device memory (3x)"
  std::vector<std::string> host_downloads; ///< "copy_to_host copied 4 KB of device memory to the host at ..."
};

/// One kernel of the code under test as nvcc compiles it for the GPU a performance model describes
/// (sm_90 for the H200): what decides how many of its blocks fit on a multiprocessor.
struct KernelResources {
  std::string kernel;          ///< demangled name
  int registers = 0;           ///< per thread
  long long shared_bytes = 0;  ///< static shared memory per block
  /// Its global loads in nvcc's PTX, by the innermost loop each is in (perfmodel::ptx_loads):
  /// bytes and loads per trip, and the source lines ("file:line") they come from. Empty when
  /// the PTX was not read.
  using LoadGroup = perfmodel::PtxLoadGroup;
  std::vector<LoadGroup> load_groups;
};
/// Judge on the emu back-end: the kernels of the code under test, compiled by the grader in its
/// build step (nvcc --resource-usage, in the sandbox; never by the code under test). Empty, with
/// `why` set, when there is no such list (no nvcc, a file nvcc rejects, or a run without the
/// grader).
std::vector<KernelResources> kernel_resources(std::string& why);
/// Whose fault it is that kernel_resources has nothing: nobody's where this machine has no nvcc,
/// or one that does not compile the lab's reference either (or the judge was given no list: a run
/// without the grader), the code under test's where nvcc is here and rejected the file or found no
/// kernel in it (nvcc would see other code than the emulator runs; a file nvcc rejects is failed
/// before it runs, unless defence gpu-compiler is off).
enum class NvccView { available, not_on_this_machine, refused };
NvccView nvcc_view(std::string& why);

/// Judge: a check whose prediction needs nvcc's view of the code under test, which the code
/// under test denied (NvccView::refused), fails saying why: "not measured" earns nothing
/// (defence prediction-required). True when it failed the check.
bool refuse_unpredicted(const std::string& what, const std::string& why);
/// Judge: a prediction beyond what `gpu` can physically do (perfmodel::beyond_ceiling: more
/// FLOP/s than its FP32 peak, more bytes/s than its DRAM moves) is refused as implausible: the
/// check fails (defence prediction-ceiling). True when it failed the check.
bool refuse_implausible(const std::string& what, const perfmodel::Gpu& gpu, double flops_per_s, double dram_bytes_per_s);

/// One finding of the emulator's sanitizer, as recorded.
struct Finding {
  std::string kind, message;
  long long count = 0;
};

/// One row of the emulator's per-line memory metrics, as recorded.
struct MetricRow {
  std::string launch, where;  ///< launch site, file:line of the access
  bool shared = false, store = false, atomic = false;
  long long requests = 0, bytes_requested = 0, units = 0, ideal_units = 0, lane_stride = 0;
  double per_request() const { return requests ? double(units) / requests : 0; }
  double ideal_per_request() const { return requests ? double(ideal_units) / requests : 0; }
  double efficiency() const;
};

class Slots;

/// One call of the code under test with its inputs and outputs (see the file comment).
class Call {
 public:
  /// `guard`: outputs are followed by a guard zone (a store past the end shows as a changed guard
  /// element). Sanitizer checks turn it off, so that such a store leaves the allocation and the
  /// emulator's sanitizer names its line.
  explicit Call(std::string what, bool guard = true);
  /// A call whose inputs and outputs live in `slots` (each in the slot of its name), not in
  /// buffers of its own: the next call on the same slots gets the same device pointers.
  Call(std::string what, Slots& slots, bool guard = true);
  ~Call();
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  /// An input of the call: uploaded before it, must come back unchanged. `must_read`: on the
  /// emulator, kernels must read every byte of it (the result depends on every element).
  template <class T>
  const T* input(const std::vector<T>& host, const std::string& name, bool must_read = true) {
    return static_cast<const T*>(add_input(host.data(), host.size() * sizeof(T), name, must_read));
  }
  /// An output of `n` elements: 0xFF bytes (or `initial`, for in-out arguments such as C of a
  /// GEMM) before the call, then kGuard elements of another fill (0xA5 bytes) that must stay untouched.
  template <class T>
  T* output(std::size_t n, const std::string& name, const std::vector<T>* initial = nullptr) {
    return static_cast<T*>(add_output(n * sizeof(T), sizeof(T), name, initial ? initial->data() : nullptr));
  }
  /// Runs the code under test (runner) or takes its record (judge). Returns false, with the
  /// failure already reported, when the call raised an error or did not happen (no results).
  /// The rules every lab shares (guard zone, inputs unchanged, outputs written by kernels,
  /// inputs read by kernels, no host access to device memory) are judged here too: each
  /// failure fails the running check, and the results are still returned for comparison.
  bool run(const std::function<void()>& code_under_test);
  /// One call that several checks read (say before run): in a later check, a call with the same
  /// name, the same input bytes and the same outputs takes the record of the first check's call
  /// instead of running the code under test again. The runner sends that record once more in
  /// each such check and the judge replays it there like any other call, so every rule (guard
  /// zone, inputs unchanged, outputs written by kernels ...) is judged in each check again.
  /// Within one check calls always run (repeated calls are meant to be repeated). For a measured
  /// call that several performance checks judge from different angles (lab 04's four): the
  /// emulator traces it once, as if the checks were one. Not for calls on Slots.
  void share_across_checks();
  /// The output's elements after the call (without the guard zone).
  template <class T>
  std::vector<T> result(const T* output) const {
    const std::vector<unsigned char>& b = output_bytes(output);
    std::vector<T> out(b.size() / sizeof(T));
    if (!b.empty()) std::memcpy(out.data(), b.data(), out.size() * sizeof(T));
    return out;
  }
  const Evidence& evidence() const;
  const std::vector<Finding>& findings() const;
  const std::vector<MetricRow>& metrics() const;
  const std::string& what() const;
  /// Bytes of the call's inputs and outputs (without guard zones).
  double io_bytes() const;
  struct State;  ///< the implementation's (kit.cpp)

 private:
  const void* add_input(const void* host, std::size_t bytes, const std::string& name, bool must_read);
  void* add_output(std::size_t bytes, std::size_t elem, const std::string& name, const void* initial);
  const std::vector<unsigned char>& output_bytes(const void* output) const;
  std::unique_ptr<State> s_;
};

/// Device buffers that outlive the calls using them (the runner's; placeholders in the judge): a
/// Call made on slots takes each input and output from the slot of its name, so that calls on
/// other data get the same device pointers with other contents. A slot grows (a new buffer) when a
/// call needs more bytes than it has.
class Slots {
 public:
  Slots() = default;
  ~Slots();
  Slots(const Slots&) = delete;
  Slots& operator=(const Slots&) = delete;
  /// The slot's device buffer of at least `bytes` (runner), or a placeholder (judge).
  void* take(const std::string& name, std::size_t bytes);

 private:
  struct Slot {
    void* device = nullptr;
    std::size_t bytes = 0;
  };
  std::map<std::string, Slot> slots_;
};

/// One function of a lab's contract in check_interleaved_calls: `call(set, slots)` calls it once on
/// data set `set` (0: A, 1: B) through kit::Call(..., slots), compares its results with that set's
/// reference (failing the check as usual, with the set in the call's name) and returns whether
/// they are right. A step may use the results of the steps before it (the store particles_to_layout
/// wrote for that set, say).
struct InterleavedStep {
  std::string function;
  std::function<bool(int set, Slots& slots)> call;
};

/// Calls are functions of their arguments (every lab's contract): each step is called on data set
/// A, then B, then A again, before the next step's calls, every call on the same slots (the same
/// device buffers with other contents). A result cached across calls (a static, a memo keyed by
/// pointer or size), a private copy an earlier call kept (lab 02's distances reading positions
/// that particles_to_layout saved instead of `store`) or work left to the next call gives a wrong
/// result on one of them, and the check fails saying which call, after which calls. Records the
/// number of wrong calls. Defence `call-order` (judge): its failures are dropped when switched off.
void check_interleaved_calls(const std::vector<InterleavedStep>& steps);
/// "data set A" / "data set B", for the names of the calls of a step.
std::string data_set_name(int set);

/// The performance model's roofline (gpulab/grade/perfmodel.hpp, predict_roofline) on one call
/// the emulator watched: the counts of all its launches, summed, against the 64-byte granules of
/// the inputs kernels read and the outputs they wrote (Evidence::touched_bytes), moved once at the
/// copy bandwidth of the GPU named `gpu` ("H200"). `fraction`: the time
/// a copy kernel takes for those bytes over the predicted time (what a GPU grade's "fraction of
/// copy" measures where its bytes are the call's inputs and outputs). Not a grade: report_metrics
/// records it in the JSON report's info ("roofline CALL"), for the model's validation
/// (docs/results/perfmodel.md, where it is right and where it is not).
struct CopyPrediction {
  bool available = false;
  std::string why;    ///< when not available
  double fraction = 0;
  std::string bound;  ///< dram, l1, shared, issue or fp32
  std::map<std::string, double> seconds;  ///< each term's predicted time (dram, l1, shared, issue, fp32)
};
/// `useful_bytes`: the bytes the fraction is of (0: the call's inputs and outputs, io_bytes), for a
/// call whose inputs hold more than it needs (lab 02's positions-only call reads one field of four).
CopyPrediction predict_fraction_of_copy(const Call& call, const std::string& gpu, double useful_bytes = 0);

/// Device timing of `run(i)` (see timing.hpp), measured in the runner, replayed in the judge.
Timing time(const std::string& name, const std::function<void(int)>& run);
/// A number measured in the runner by trusted code (a ceiling: copy bandwidth, the vendor
/// library's time), replayed in the judge.
double measured(const std::string& name, const std::function<double()>& measure);
/// Floats computed in the runner by trusted code (e.g. the vendor library's result on the timed
/// inputs), replayed in the judge.
std::vector<float> measured_floats(const std::string& name, const std::function<std::vector<float>()>& compute);

/// What a timed call must at least do, and the device's peak rates: its physical floor
/// (perfmodel.hpp, physical_floor_ms).
using Work = perfmodel::Work;
using PeakRates = perfmodel::PeakRates;

/// The timed runs of the code under test on a GPU, such that it cannot move its time:
/// - `sets` input sets take turns in the same device buffers: before run i (outside the timed
///   region) each rotated argument gets set i % sets, each output is poisoned, so a result kept
///   from an earlier run (a memo by pointer, the last output left in place) is the wrong set's;
/// - after each run (outside the timed region) a window of each checked buffer, at an offset drawn
///   once the run has returned, is read back from a random sample of the runs; the judge compares
///   it with the set's expected result (check: the reference's, or an untimed call's) (defence
///   `timed-runs`);
/// - timing.hpp's rules: the L2 flushed and its persisting lines reset before every run, the run's
///   end the whole device's (work on the code's own streams included);
/// - a median below the physical floor of the call's Work fails "implausibly fast" (defence
///   `physical-floor`).
/// Arguments are given in the same order in the runner and the judge (placeholders there).
class TimedCall {
 public:
  TimedCall(std::string name, int sets);
  ~TimedCall();
  TimedCall(const TimedCall&) = delete;
  TimedCall& operator=(const TimedCall&) = delete;

  /// An argument restored before every run from its value in that run's set (`per_set[set]`, all
  /// of one size): an input, or an argument the call reads and writes (C of a GEMM, a store
  /// stepped in place). The device pointer the timed code must use.
  template <class T>
  T* rotated(const std::vector<const std::vector<T>*>& per_set) {
    std::vector<const void*> sets;
    for (const auto* v : per_set) sets.push_back(v->data());
    return static_cast<T*>(add_rotated(sets, per_set.empty() ? 0 : per_set[0]->size() * sizeof(T)));
  }
  /// The same for an argument whose sets are made on the device before the runs, outside the timed
  /// region, by `produce(set, dst)` (runner only: e.g. lab 02's store, in the hand-in's own layout,
  /// by its particles_to_layout).
  template <class T>
  T* rotated(std::size_t n, const std::function<void(int set, T* dst)>& produce) {
    return static_cast<T*>(add_produced(n * sizeof(T), [produce](int set, void* dst) { produce(set, static_cast<T*>(dst)); }));
  }
  /// An output of n elements, poisoned (0xFF bytes) before every run.
  template <class T>
  T* output(std::size_t n) {
    return static_cast<T*>(add_output(n * sizeof(T)));
  }
  /// Checks `device` (an output or a rotated argument) after the runs: the window read back must
  /// equal `expected[set]` element by element within `tolerance` (floating-point types; 0: equal;
  /// `relative`: times the expected value's magnitude); `name` names it in messages. A struct of
  /// floats (float4) with a tolerance is compared float by float, other types bit for bit.
  template <class T>
  void check(const T* device, const std::vector<const std::vector<T>*>& expected, double tolerance,
             const std::string& name, bool relative = false) {
    std::vector<const void*> sets;
    for (const auto* v : expected) sets.push_back(v->data());
    add_check(device, sets, expected.empty() ? 0 : expected[0]->size(), sizeof(T), kind_of<T>(tolerance), tolerance,
              name, {}, relative);
  }
  /// The same against a result made on the device before the runs by `produce(set, dst)` (runner
  /// only; e.g. the hand-in's own particle_step on a copy of the set, when only it knows its
  /// layout): the sampled runs' windows are recorded with the same window of that result.
  template <class T>
  void check(const T* device, std::size_t n, const std::function<void(int set, T* dst)>& produce, double tolerance,
             const std::string& name, bool relative = false) {
    add_check(device, {}, n, sizeof(T), kind_of<T>(tolerance), tolerance, name,
              [produce](int set, void* dst) { produce(set, static_cast<T*>(dst)); }, relative);
  }
  /// Times `run` (the code under test on these arguments) and judges its runs and floor (see
  /// above); the Timing of kit::time, {} when it could not be measured.
  Timing time(const std::function<void()>& run, const Work& work);
  struct State;  ///< the implementation's (kit_timed.cpp)
  using Producer = std::function<void(int set, void* dst)>;

 private:
  /// 0: compared bit for bit, 1: as floats, 2: as doubles.
  template <class T>
  static int kind_of(double tolerance) {
    if (std::is_same_v<T, double>) return 2;
    return std::is_same_v<T, float> || (tolerance > 0 && sizeof(T) % sizeof(float) == 0) ? 1 : 0;
  }
  void* add_rotated(const std::vector<const void*>& sets, std::size_t bytes);
  void* add_produced(std::size_t bytes, const Producer& produce);
  void* add_output(std::size_t bytes);
  void add_check(const void* device, const std::vector<const void*>& expected, std::size_t n, std::size_t elem,
                 int kind, double tolerance, const std::string& name, const Producer& produce, bool relative);
  std::unique_ptr<State> s_;
};

/// Device memory of the runner for the timed runs of a performance check: `upload` returns a
/// device pointer in the runner and a placeholder in the judge (never dereferenced there).
class DeviceData {
 public:
  DeviceData() = default;
  ~DeviceData();
  DeviceData(const DeviceData&) = delete;
  DeviceData& operator=(const DeviceData&) = delete;
  template <class T>
  const T* upload(const std::vector<T>& host) {
    return static_cast<const T*>(upload_bytes(host.data(), host.size() * sizeof(T)));
  }
  template <class T>
  T* scratch(std::size_t n) {
    return static_cast<T*>(scratch_bytes(n * sizeof(T)));
  }

 private:
  const void* upload_bytes(const void* host, std::size_t bytes);
  void* scratch_bytes(std::size_t bytes);
  std::vector<void*> owned_;
};

/// Fails the running check with the sanitizer findings of `calls` (first five kinds shown, the
/// rest counted) and records their number; on GPU back-ends: not measured.
void judge_findings(const std::vector<const Call*>& calls);
/// Puts a call's metric rows into the report (JSON "metrics" rows and the info table), and its
/// roofline (report_roofline).
void report_metrics(const Call& call);
/// Puts a call's roofline into the report's info ("roofline CALL": the predicted fraction of copy,
/// the bound, the call's input and output bytes; docs/results/perfmodel/roofline_labs.py reads it).
void report_roofline(const Call& call);
/// The launch of a call that moved the most global sectors (nullptr when none was recorded);
/// `total_sectors`: all its launches' sectors.
const Evidence::Launch* busiest_launch(const Call& call, long long& total_sectors);

/// A call's busiest launch as it would run at the GPU grade's size, from the same call run at two
/// sizes on the emulator (scale_to_size).
struct GpuScale {
  double blocks = 0;                 ///< its blocks (0: as launched here)
  double busiest_block_sectors = 0;  ///< the global sectors its busiest block moves (0: not known)
  double work = 1;                   ///< the launch's sectors there over here
};
/// `here` ran at size n, `other` at `other_n`; the GPU grade's size is `gpu_n`, where the call's
/// work is (gpu_n / n)^work_exponent times this one's (1: a pass over n items, 2: over n x n).
/// The busiest launch's grid grows as n^k with k between 0 (a fixed grid) and 1; its busiest
/// block's sectors as n^k with k between 0 and work_exponent, and at most the whole launch's. A
/// grid that shrinks as n grows, or no launch at the other size, counts as fixed. Pick sizes
/// whose grids are many blocks, or whose blocks divide both, so that rounding up does not read as
/// a slower growth.
GpuScale scale_to_size(const Call& here, double n, const Call& other, double other_n, double gpu_n,
                       double work_exponent);

/// The DRAM read bandwidth a call's loads would reach on the GPU named `gpu` (an H200), by Little's
/// law on the bytes each thread keeps in flight (perfmodel::read_bytes_per_s): the bytes per
/// thread and loop trip of the load group the call's global load requests hit most (nvcc's PTX of
/// the code under test: kernel_resources, perfmodel::busiest_load_group), and the threads per SM
/// of its busiest launch, limited by occupancy (the kernels' registers and shared memory) and by
/// its blocks, as launched or, with `scale`, at the GPU grade's size. With `scale`, also by its
/// busiest block: that block's bytes take at least (its bytes / what one block's loads in flight
/// fetch, by the same law) however many blocks the grid has.
struct ReadPrediction {
  bool available = false;
  std::string why;  ///< when not available (no nvcc, no model of that GPU, no launch recorded)
  /// Not available because of the code under test (nvcc rejected it or found no kernel, no load of
  /// nvcc's PTX on a line the emulator counted, no launch recorded), not of this machine or model
  bool refused = false;
  double bytes_per_s = 0, threads_per_sm = 0, blocks = 0;
  long long bytes_per_thread = 0, weight = 0, threads_per_block = 0;
  int loads = 0, registers = 0;
  bool in_loop = false;
  bool busiest_block_bound = false;  ///< the busiest block, not the grid, sets bytes_per_s
  std::string lines;  ///< "file:line, ..." of the group's loads
  /// "the busiest loads (...): each thread loads ...; the busiest launch, ... Little's law gives N GB/s"
  std::string text;
};
ReadPrediction predict_read_bandwidth(const Call& call, const std::string& gpu, const GpuScale* scale = nullptr);

/// Judge on the emu back-end: the fraction of a copy kernel's bandwidth that `call` would reach
/// on the GPU named `gpu` (an H200), the slower of two limits:
/// - the roofline (predict_fraction_of_copy: the DRAM moving the 64-byte granules the kernels
///   touched, the L2 taking their store requests, the SM pipes);
/// - the bytes in flight (predict_read_bandwidth at the GPU grade's size, `scale`): `read_bytes`
///   at that bandwidth; not graded where nvcc is missing (said so).
/// `useful_bytes`: the bytes the fraction is counted on (the GPU grade's bytes), `min`: the GPU
/// grade's threshold. Records the fraction and fails below `min` with the evidence (the bound, the
/// bytes touched and moved, the hottest load or store, the bytes in flight) and `hint` (bound by
/// the bytes in flight: a hint about those). A prediction that moves `least_bytes` (the least any
/// correct implementation moves; 0: `useful_bytes`) faster than the GPU's DRAM is refused
/// (refuse_implausible): a layout that skips bytes the GPU grade counts (a field's unused lane)
/// is faster than the nominal bytes allow, not implausible. Returns the fraction (0: not measured).
double judge_predicted_fraction_of_copy(const Call& call, double useful_bytes, double read_bytes, const GpuScale& scale,
                                        double min, const std::string& hint, const std::string& gpu = "H200",
                                        double least_bytes = 0);

/// The metrics row with the most sectors/wavefronts among the global loads (nullptr if none).
const MetricRow* hottest_global_load(const Call& call);
/// The same among the global stores (nullptr if none).
const MetricRow* hottest_global_store(const Call& call);
/// "file.cu:line" of a path and line.
std::string where(const std::string& file, int line);

/// A number as a message shows it: `digits` significant digits, no trailing noise ("0.8", not
/// "0.80000000000000004", which is what a double streamed into a test failure prints).
std::string num(double v, int digits = 3);

/// A ratio that must reach `threshold`, measured by `measure` (returning {ratio, relative noise,
/// text}); measured once more when the first result is below but within noise of it.
struct Ratio {
  double value = 0, noise = 0;
  std::string text;
  bool remeasured = false;
};
Ratio measure_ratio(double threshold, const std::function<Ratio()>& measure);

}  // namespace gpulab::grade::kit
