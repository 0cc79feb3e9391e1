// Turning a block's traced accesses into warp-level requests, sectors and wavefronts, summed
// per source line; the sanitizer's findings merged across workers; file:line from the return
// addresses (libbacktrace).
#include "gpulab/emu/metrics.hpp"

#include <backtrace.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "internal.hpp"

namespace gpulab::emu::detail {
void set_sanitizer_enabled(bool on);
}  // namespace gpulab::emu::detail

namespace gpulab::emu {
namespace {
using namespace detail;

struct Key {
  unsigned long long launch_id;
  const char* launch_file;
  int launch_line;
  const void* kernel;  // not part of the order: one launch, one kernel
  std::uintptr_t ra;
  std::uint8_t flags;
  bool operator<(const Key& o) const { return std::tie(launch_id, ra, flags) < std::tie(o.launch_id, o.ra, o.flags); }
};
struct Totals {
  long long requests = 0, lanes = 0, bytes = 0, units = 0, ideal = 0, lines = 0, under_global_load = 0;
  std::map<long long, long long> strides;  ///< address step between neighbouring lanes -> requests
  /// The count of the step counted last (an instruction's requests mostly repeat one): no search.
  /// A pointer into this object's `strides`, so a copy starts without it.
  struct LastStride {
    long long step = 0;
    long long* count = nullptr;
    LastStride() = default;
    LastStride(const LastStride&) {}
    LastStride& operator=(const LastStride&) {
      count = nullptr;
      return *this;
    }
  } last_stride;
  void count_stride(long long step) {
    if (!last_stride.count || step != last_stride.step) {
      last_stride.step = step;
      last_stride.count = &strides[step];
    }
    ++*last_stride.count;
  }
  void add(const Totals& t) {
    requests += t.requests;
    lanes += t.lanes;
    bytes += t.bytes;
    units += t.units;
    ideal += t.ideal;
    lines += t.lines;
    under_global_load += t.under_global_load;
    for (const auto& [k, v] : t.strides) strides[k] += v;
  }
};

std::mutex g_mutex;
std::map<Key, Totals> g_totals;
std::vector<FindingRecord> g_findings;  ///< merged: per (kind, ra) the lowest block's first
long long g_findings_total = 0;
long long g_dropped = 0;

/// Sorts a request's few keys (addresses, sectors, words; at most 64 or so), which lanes in order
/// mostly give as one ascending run, or two (two rows, or a half-warp reading what the other
/// half reads): a run or two costs a pass, not a sort.
void sort_keys(std::vector<std::uintptr_t>& keys) {
  const std::size_t n = keys.size();
  std::size_t cut = 1;
  while (cut < n && keys[cut - 1] <= keys[cut]) ++cut;
  if (cut >= n) return;
  std::size_t end = cut + 1;
  while (end < n && keys[end - 1] <= keys[end]) ++end;
  if (end < n) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  static thread_local std::vector<std::uintptr_t> merged;
  merged.resize(n);
  std::merge(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(cut), keys.begin() + static_cast<std::ptrdiff_t>(cut),
             keys.end(), merged.begin());
  keys.swap(merged);
}

/// Wavefronts of one shared-memory request (lanes [i, j) of a sorted group) under 32 banks of 4
/// bytes, and the fewest its width allows. Measured against Nsight Compute on an H200
/// (common/emu/validation/kernels.cu, 18 lane patterns at each width: docs/emulator-metrics.md):
///   * up to 4 bytes per lane: the most distinct words any one bank must deliver (lanes reading
///     the same word share it, a broadcast);
///   * 8 bytes: the warp's two half-warps each read their distinct words, and a bank delivers the
///     sum of both halves' (a word both halves read counts twice), unless the whole warp reads one
///     address; at least one wavefront per 128 bytes of the quarter-warps' distinct data;
///   * 16 bytes: each half-warp is served on its own (at least one wavefront each); within a
///     half-warp a bank delivers the sum of its two quarter-warps' distinct words, and a half-warp
///     that reads one address takes one wavefront.
struct SharedCost {
  long long wavefronts = 0, ideal = 0;
};
SharedCost shared_wavefronts(const std::vector<Access>& v, std::size_t i, std::size_t j) {
  static thread_local std::vector<std::uintptr_t> scratch;
  unsigned width = 0;
  for (std::size_t k = i; k < j; ++k) width = std::max<unsigned>(width, v[k].size);
  // Distinct words of the lanes [lo, hi) of the request's 32 (lane % 32), added to per_bank
  // (unless null); returns their number.
  auto add_words = [&](int lo, int hi, int* per_bank) {
    scratch.clear();
    for (std::size_t k = i; k < j; ++k) {
      const int lane = v[k].lane % 32;
      if (lane < lo || lane >= hi) continue;
      for (unsigned o = 0; o < v[k].size; o += 4) scratch.push_back((v[k].addr + o) >> 2);
    }
    sort_keys(scratch);
    scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
    if (per_bank)
      for (std::uintptr_t word : scratch) ++per_bank[word % 32];
    return static_cast<long long>(scratch.size());
  };
  auto one_address = [&](int lo, int hi) {  // every lane of [lo, hi) reads one address (and some do)
    std::uintptr_t a = 0;
    bool any = false;
    for (std::size_t k = i; k < j; ++k) {
      const int lane = v[k].lane % 32;
      if (lane < lo || lane >= hi) continue;
      if (any && v[k].addr != a) return false;
      a = v[k].addr, any = true;
    }
    return any;
  };
  auto has_lanes = [&](int lo, int hi) {
    for (std::size_t k = i; k < j; ++k)
      if (v[k].lane % 32 >= lo && v[k].lane % 32 < hi) return true;
    return false;
  };
  SharedCost c;
  if (width <= 4) {
    // The usual case first: no bank holds two distinct words (a broadcast shares one), so one
    // wavefront serves the request, as few as its words allow.
    std::uintptr_t word_of_bank[32];
    std::uint32_t banks_used = 0;
    bool conflict = false;
    for (std::size_t k = i; k < j && !conflict; ++k) {
      const std::uintptr_t word = v[k].addr >> 2;
      const unsigned bank = static_cast<unsigned>(word % 32);
      if (!(banks_used >> bank & 1u)) {
        banks_used |= 1u << bank;
        word_of_bank[bank] = word;
      } else {
        conflict = word_of_bank[bank] != word;
      }
    }
    if (!conflict) return {banks_used ? 1 : 0, 1};
    int per_bank[32] = {};
    const long long words = add_words(0, 32, per_bank);
    c.wavefronts = *std::max_element(per_bank, per_bank + 32);
    c.ideal = std::max<long long>(1, (words + 31) / 32);
  } else if (width <= 8) {
    if (one_address(0, 32)) return {1, 1};
    int per_bank[32] = {};
    const long long words = add_words(0, 16, per_bank) + add_words(16, 32, per_bank);
    long long quarter_words = 0;
    for (int q = 0; q < 4; ++q) quarter_words += add_words(8 * q, 8 * q + 8, nullptr);
    const long long bandwidth = (quarter_words + 31) / 32;
    c.wavefronts = std::max<long long>(*std::max_element(per_bank, per_bank + 32), bandwidth);
    c.ideal = std::max<long long>({1, (words + 31) / 32, bandwidth});
  } else {
    for (int h = 0; h < 2; ++h) {
      if (!has_lanes(16 * h, 16 * h + 16)) continue;
      if (one_address(16 * h, 16 * h + 16)) {
        ++c.wavefronts, ++c.ideal;
        continue;
      }
      int per_bank[32] = {};
      const long long words = add_words(16 * h, 16 * h + 8, per_bank) + add_words(16 * h + 8, 16 * h + 16, per_bank);
      c.wavefronts += *std::max_element(per_bank, per_bank + 32);
      c.ideal += std::max<long long>(1, (words + 31) / 32);
    }
  }
  return c;
}

/// Units of one request (lanes [i, j) of a sorted group): sectors or wavefronts, and the ideal.
void measure(const std::vector<Access>& v, std::size_t i, std::size_t j, Totals& t) {
  static thread_local std::vector<std::uintptr_t> scratch;
  scratch.clear();
  long long bytes = 0;
  const bool shared = v[i].flags & kShared;
  // Every lane's access the same power-of-two size at a multiple of it (a float, a float4): each
  // lies in one sector, and two either coincide or do not overlap. Then the sorted addresses
  // give the distinct bytes, sectors and lines in one pass.
  bool aligned = true;
  const unsigned size = v[i].size;
  for (std::size_t k = i; k < j; ++k) aligned &= v[k].size == size && (v[k].addr & (size - 1)) == 0;
  aligned &= size <= 32 && (size & (size - 1)) == 0;
  if (!shared && aligned) {
    bytes = static_cast<long long>(size) * static_cast<long long>(j - i);
    for (std::size_t k = i; k < j; ++k) scratch.push_back(v[k].addr);
    sort_keys(scratch);
    long long distinct = 0, sectors = 0, lines = 0;
    for (std::size_t k = 0; k < scratch.size(); ++k) {
      if (k > 0 && scratch[k] == scratch[k - 1]) continue;
      ++distinct;
      sectors += k == 0 || scratch[k] >> 5 != scratch[k - 1] >> 5;
      lines += k == 0 || scratch[k] >> 7 != scratch[k - 1] >> 7;
    }
    t.units += sectors;
    t.lines += lines;
    t.ideal += (distinct * size + 31) / 32;
  } else if (!shared) {
    for (std::size_t k = i; k < j; ++k) {
      bytes += v[k].size;
      for (std::uintptr_t s = v[k].addr >> 5; s <= (v[k].addr + v[k].size - 1) >> 5; ++s) scratch.push_back(s);
    }
    sort_keys(scratch);
    const long long sectors = std::unique(scratch.begin(), scratch.end()) - scratch.begin();
    t.units += sectors;
    // 128-byte lines (4 sectors each) the sorted, distinct sectors fall in.
    for (long long k = 0; k < sectors; ++k)
      if (k == 0 || scratch[k] >> 2 != scratch[k - 1] >> 2) ++t.lines;
    // Ideal: the distinct bytes requested, packed into sectors.
    static thread_local std::vector<std::pair<std::uintptr_t, std::uintptr_t>> spans;
    spans.clear();
    for (std::size_t k = i; k < j; ++k) spans.emplace_back(v[k].addr, v[k].addr + v[k].size);
    if (!std::is_sorted(spans.begin(), spans.end())) std::sort(spans.begin(), spans.end());
    long long distinct = 0;
    std::uintptr_t end = 0;
    for (const auto& [b, e] : spans) {
      const std::uintptr_t from = std::max(b, end);
      if (e > from) distinct += static_cast<long long>(e - from);
      end = std::max(end, e);
    }
    t.ideal += (distinct + 31) / 32;
  } else {
    for (std::size_t k = i; k < j; ++k) bytes += v[k].size;
    const SharedCost c = shared_wavefronts(v, i, j);
    t.units += c.wavefronts;
    t.ideal += c.ideal;
  }
  t.bytes += bytes;
  t.lanes += static_cast<long long>(j - i);
  ++t.requests;
  for (std::size_t k = i; k + 1 < j; ++k)
    if (v[k + 1].lane == v[k].lane + 1) {
      t.count_stride(static_cast<long long>(v[k + 1].addr) - static_cast<long long>(v[k].addr));
      break;
    }
}

/// An instruction of a warp's accesses: its return address, with the flags above the 56 bits a
/// user-space address needs.
inline std::uint64_t instruction_key(const Access& a) {
  return static_cast<std::uint64_t>(a.ra) | (static_cast<std::uint64_t>(a.flags) << 56);
}

/// The usual case of group_requests, without a table of instructions: every lane of the warp made
/// the same sequence of accesses (the same instructions in the same order, as lanes that never
/// diverge do). The k-th access of each lane is then the k-th execution of one instruction by
/// each, and the lanes' k-th accesses form request k. Each lane's accesses are a few runs of the
/// recording (a lane runs until it returns or waits: mostly one run between two barriers).
/// Returns false, having measured nothing, where the lanes' sequences differ or a lane of `need`
/// made no access.
template <typename F>
bool group_lockstep(const std::vector<Access>& v, std::uint64_t need, F& measure_request) {
  struct Run {
    std::uint32_t begin, end;
  };
  static thread_local std::vector<Run> runs;            // in recording order
  static thread_local std::vector<std::uint32_t> mine;  // [slot * per_lane + r]: a lane's r-th run
  static thread_local std::vector<Access> out;
  runs.clear();
  for (std::size_t a = 0; a < v.size(); ++a)
    if (a == 0 || v[a].lane != v[a - 1].lane) {
      if (a) runs.back().end = static_cast<std::uint32_t>(a);
      runs.push_back({static_cast<std::uint32_t>(a), 0});
    }
  runs.back().end = static_cast<std::uint32_t>(v.size());
  // Per-lane tables off the stack: grouping runs on a fiber's stack, at a barrier or a return.
  struct Lanes {
    std::uint32_t count[64], runs_of[64], next[64];
    unsigned slot_of[64];
  };
  static thread_local Lanes t;
  std::uint32_t* const count = t.count;
  std::uint32_t* const runs_of = t.runs_of;
  std::uint32_t* const next = t.next;
  unsigned* const slot_of = t.slot_of;
  std::fill(count, count + 64, 0u);
  std::fill(runs_of, runs_of + 64, 0u);
  std::fill(next, next + 64, 0u);
  std::uint64_t present = 0;
  for (const Run& r : runs) {
    const unsigned l = v[r.begin].lane % 64;
    count[l] += r.end - r.begin;
    ++runs_of[l];
    present |= std::uint64_t{1} << l;
  }
  if (need & ~present) return false;
  const unsigned lanes = static_cast<unsigned>(__builtin_popcountll(present));
  const std::size_t n = v.size() / lanes;
  std::uint32_t per_lane = 0;
  for (unsigned l = 0, s = 0; l < 64; ++l)
    if ((present >> l) & 1) {
      if (count[l] != n) return false;
      per_lane = std::max(per_lane, runs_of[l]);
      slot_of[l] = s++;
    }
  mine.assign(static_cast<std::size_t>(lanes) * per_lane, 0);
  for (std::uint32_t r = 0; r < runs.size(); ++r) {
    const unsigned s = slot_of[v[runs[r].begin].lane % 64];
    mine[s * per_lane + next[s]++] = r;
  }
  // A lane's place in its own sequence: the access, the end of its run, the run's number.
  struct Cursor {
    std::uint32_t at, end, run;
  };
  auto start = [&](unsigned s) {
    const Run& r = runs[mine[s * per_lane]];
    return Cursor{r.begin, r.end, 0};
  };
  auto step = [&](unsigned s, Cursor& c) {
    if (++c.at == c.end && ++c.run < next[s]) {
      const Run& r = runs[mine[s * per_lane + c.run]];
      c.at = r.begin;
      c.end = r.end;
    }
  };
  // Every lane's sequence the first lane's: the same instruction at each k.
  for (unsigned s = 1; s < lanes; ++s) {
    Cursor x = start(s), y = start(0);
    for (std::size_t k = 0; k < n; ++k, step(s, x), step(0, y))
      if (instruction_key(v[x.at]) != instruction_key(v[y.at])) return false;
  }
  static thread_local Cursor cursor[64];
  for (unsigned s = 0; s < lanes; ++s) cursor[s] = start(s);
  for (std::size_t k = 0; k < n; ++k) {
    out.clear();
    for (unsigned s = 0; s < lanes; ++s) {  // in lane order
      out.push_back(v[cursor[s].at]);
      step(s, cursor[s]);
    }
    for (std::size_t i = 0; i < out.size();) {
      std::size_t j = i + 1;
      while (j < out.size() && out[j].lane / 32 == out[i].lane / 32) ++j;
      measure_request(out, i, j);
      i = j;
    }
  }
  return true;
}

/// Forms a warp's requests from its accesses (in the order they were recorded) and calls
/// measure_request(out, i, j) for each: the k-th execution of an instruction by each lane of the
/// warp is one request, formed per 32 lanes (a 64-lane warp counts as two), its accesses in lane
/// order. In lockstep where it can (group_lockstep, which `need` is passed to); else, unless
/// lockstep_only (then it returns false, having measured nothing), linear in the accesses:
/// bucketed by instruction, then counting-sorted by k. (Each lane's accesses were recorded in its
/// program order, so counting a lane's executions of an instruction in recording order numbers
/// them as its sequence numbers would.)
template <typename F>
bool group_requests(std::vector<Access>& v, std::uint64_t need, bool lockstep_only, F measure_request) {
  if (group_lockstep(v, need, measure_request)) return true;
  if (lockstep_only) return false;
  static thread_local std::unordered_map<std::uint64_t, std::uint32_t> index;  // instruction -> bucket
  static thread_local std::vector<std::vector<std::uint32_t>> buckets;         // access indices per instruction
  static thread_local std::vector<std::uint32_t> first_of_k, order;
  static thread_local std::vector<Access> out;
  index.clear();
  std::size_t used = 0;
  std::uint64_t last_key = ~0ull;
  std::uint32_t last_bucket = 0;
  for (std::size_t a = 0; a < v.size(); ++a) {
    const std::uint64_t key = instruction_key(v[a]);
    if (key != last_key) {
      auto [it, fresh] = index.try_emplace(key, static_cast<std::uint32_t>(used));
      if (fresh) {
        if (buckets.size() <= used) buckets.emplace_back();
        buckets[used++].clear();
      }
      last_key = key;
      last_bucket = it->second;
    }
    buckets[last_bucket].push_back(static_cast<std::uint32_t>(a));
  }
  for (std::size_t b = 0; b < used; ++b) {
    const std::vector<std::uint32_t>& members = buckets[b];
    // k of each access: how many times its lane executed this instruction before.
    std::uint32_t executed[64] = {};
    std::uint32_t max_k = 0;
    for (std::uint32_t a : members) {
      v[a].seq = executed[v[a].lane]++;
      max_k = std::max(max_k, v[a].seq);
    }
    // Counting sort by (k, lane / 32, lane): k first, lanes in order within each k.
    first_of_k.assign(static_cast<std::size_t>(max_k) + 2, 0);
    for (std::uint32_t a : members) ++first_of_k[v[a].seq + 1];
    for (std::size_t k = 1; k < first_of_k.size(); ++k) first_of_k[k] += first_of_k[k - 1];
    order.resize(members.size());
    for (std::uint32_t a : members) order[first_of_k[v[a].seq]++] = a;  // k ascending, recording order within
    out.clear();
    for (std::size_t i = 0; i < order.size();) {
      std::size_t j = i;
      while (j < order.size() && v[order[j]].seq == v[order[i]].seq) ++j;
      const std::size_t from = out.size();
      for (std::size_t m = i; m < j; ++m) out.push_back(v[order[m]]);
      auto by_lane = [](const Access& x, const Access& y) { return x.lane < y.lane; };  // at most 64, distinct
      if (!std::is_sorted(out.begin() + static_cast<std::ptrdiff_t>(from), out.end(), by_lane))
        std::sort(out.begin() + static_cast<std::ptrdiff_t>(from), out.end(), by_lane);
      i = j;
    }
    for (std::size_t i = 0; i < out.size();) {
      std::size_t j = i;
      while (j < out.size() && out[j].seq == out[i].seq && out[j].lane / 32 == out[i].lane / 32) ++j;
      measure_request(out, i, j);
      i = j;
    }
  }
  return true;
}

}  // namespace
}  // namespace gpulab::emu

namespace gpulab::emu::detail {

namespace {
/// The requests of the block so far, per instruction: the warps measured at their end, then the
/// rest at the block's (this worker's; cleared by tracing_end_block).
thread_local std::map<Key, Totals> t_block_totals;
thread_local std::uint64_t t_block_generation = 1;  ///< counts the clears of t_block_totals

/// Measures the accesses warp `warp` recorded since it was last measured into t_block_totals, and
/// forgets them. With lockstep_only, only where its lanes made the same sequence of accesses and
/// every lane of `need` made some: the k-th execution of an instruction by each lane is then the
/// same request whenever the rest are measured (each lane that can still make accesses has made
/// the same number of each instruction's). Returns whether it measured them.
bool measure_warp(Worker& w, std::size_t warp, std::uint64_t need, bool lockstep_only) {
  std::vector<Access>& v = w.accesses[warp];
  if (v.empty()) return true;
  std::map<Key, Totals>& local = t_block_totals;
  // The totals of instructions measured in this block, in a small table by return address
  // (requests come per instruction, or in program order, cycling through a loop's instructions):
  // no search of the map for most requests. Emptied with the map (t_block_generation).
  struct Recent {
    std::uintptr_t ra = 0;
    std::uint8_t flags = 0;
    Totals* totals = nullptr;
    std::uint64_t generation = 0;
  };
  static thread_local Recent recent[64];
  const bool measured = group_requests(v, need, lockstep_only, [&](const std::vector<Access>& req, std::size_t i, std::size_t j) {
    Recent& r = recent[(req[i].ra ^ (req[i].ra >> 6) ^ req[i].flags) % 64];
    if (r.generation != t_block_generation || r.ra != req[i].ra || r.flags != req[i].flags)
      r = Recent{req[i].ra, req[i].flags, &local[Key{w.launch->id, w.launch->file, w.launch->line, w.launch->kernel, req[i].ra, req[i].flags}],
                 t_block_generation};
    measure(req, i, j, *r.totals);
  });
  if (!measured) return false;
  // Shared loads each lane made while a global load of its own had not yet been followed by a
  // shared store (the loaded value is on its way to shared memory): work that can hide that
  // load's latency, as in a double-buffered tile loop. Walked in recording order, which is each
  // lane's program order; which lanes wait for such a store is kept from one measure to the next.
  // Counted per instruction here, added to the instruction's totals once per measure.
  static thread_local std::unordered_map<std::uintptr_t, long long> hidden;
  hidden.clear();
  std::uint64_t pending = w.loads_pending[warp];  // (in a register: not a store per access)
  for (const Access& a : v) {
    const std::uint64_t bit = std::uint64_t{1} << (a.lane % 64);
    if (a.flags & kAtomic) continue;
    if (!(a.flags & kShared)) {
      if (!(a.flags & kStore)) pending |= bit;
    } else if (a.flags & kStore) {
      pending &= ~bit;
    } else if (pending & bit) {
      ++hidden[a.ra];  // a shared load: flags kShared alone
    }
  }
  w.loads_pending[warp] = pending;
  for (const auto& [ra, n] : hidden)
    local[Key{w.launch->id, w.launch->file, w.launch->line, w.launch->kernel, ra, kShared}].under_global_load += n;
  v.clear();
  return true;
}
}  // namespace

void tracing_end_warp(Worker& w, int warp) { measure_warp(w, static_cast<std::size_t>(warp), 0, false); }

void tracing_end_phase(Worker& w) {
  if (!w.checked) return;
  for (std::size_t i = 0; i < w.accesses.size(); ++i) {
    // A warp that could not be grouped is tried again only once its accesses have doubled: its
    // lanes' sequences rarely agree again, and trying at every barrier would walk them each time
    // (a loop of barriers in which one lane stores: quadratic in the barriers).
    const std::size_t size = w.accesses[i].size();
    if (size == 0 || size < w.group_retry[i]) continue;
    w.group_retry[i] = measure_warp(w, i, w.warps[i].live, true) ? 0 : 2 * size;
  }
}

void tracing_end_block(Worker& w) {
  tracing_flush_pending(w);
  cross_block_end_block(w);
  // A block nobody traced (or that made no access) has nothing to add: no lock to take.
  if (w.recorded == 0 && w.dropped == 0 && w.findings.empty() && !w.launch->watched) return;
  std::map<Key, Totals>& local = t_block_totals;
  for (std::size_t i = 0; i < w.accesses.size(); ++i) measure_warp(w, i, 0, false);
  if (w.launch->watched) {
    LaunchCounts block;
    for (const auto& [k, t] : local) {
      if (k.flags & kShared) {
        block.shared_requests += t.requests;
        block.shared_wavefronts += t.units;
        if (!(k.flags & kStore)) {
          block.shared_load_requests += t.requests;
          block.shared_load_wavefronts += t.units;
          block.shared_load_lanes += t.lanes;
          block.shared_load_lanes_under_global += t.under_global_load;
        }
      } else if (k.flags & kStore) {
        block.global_store_requests += t.requests;
        block.global_store_sectors += t.units;
        block.global_store_lines += t.lines;
        if (k.flags & kAtomic) {  // an atomic reads its sectors too: traffic both ways
          block.global_load_requests += t.requests;
          block.global_load_sectors += t.units;
          block.global_load_lines += t.lines;
        }
      } else {
        block.global_load_requests += t.requests;
        block.global_load_sectors += t.units;
        block.global_load_lines += t.lines;
      }
    }
    watch_add_traffic(block);
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  for (const auto& [k, t] : local) g_totals[k].add(t);
  local.clear();
  ++t_block_generation;
  g_dropped += w.dropped;
  w.dropped = 0;
  for (FindingRecord& f : w.findings) {
    g_findings_total += f.count;
    auto it = std::find_if(g_findings.begin(), g_findings.end(),
                           [&](const FindingRecord& g) { return g.kind == f.kind && g.ra == f.ra; });
    if (it == g_findings.end()) {
      g_findings.push_back(f);
    } else {
      const long long total = it->count + f.count;
      if (f.block < it->block) *it = f;  // keep the lowest block's: independent of workers
      it->count = total;
    }
  }
  w.findings.clear();
}

bool bump_finding(int kind, std::uintptr_t ra) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (FindingRecord& g : g_findings)
    if (g.kind == kind && g.ra == ra) {
      ++g.count;
      ++g_findings_total;
      return true;
    }
  return false;
}

void add_finding(const FindingRecord& f) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_findings_total += f.count;
  for (FindingRecord& g : g_findings)
    if (g.kind == f.kind && g.ra == f.ra) {  // another thread added it meanwhile
      g.count += f.count;
      return;
    }
  g_findings.push_back(f);
}

}  // namespace gpulab::emu::detail

namespace gpulab::emu {
namespace {

/// file:line of an instruction of a kernel file: the innermost inlined frame that is not in the
/// emulator's or the standard library's headers.
struct Symbolizer {
  backtrace_state* state = backtrace_create_state(nullptr, 1, [](void*, const char*, int) {}, nullptr);
  std::map<std::uintptr_t, std::pair<std::string, int>> cache;
  static bool library(const std::string& file) {
    return file.find("/gpulab/emu/") != std::string::npos || file.find("/include/c++/") != std::string::npos ||
           file.find("/gpulab/launch.hpp") != std::string::npos;
  }
  std::vector<std::pair<std::string, int>> frames_at(std::uintptr_t pc) {
    std::vector<std::pair<std::string, int>> frames;
    backtrace_pcinfo(
        state, pc,
        [](void* d, std::uintptr_t, const char* file, int line, const char*) {
          if (!file) return 0;
          // DWARF 5 line tables may name the main file by its absolute path, relative to the
          // build directory; libbacktrace then joins them ("/build//src/x.cu"): keep the path.
          std::string f = file;
          if (const auto k = f.find("//"); k != std::string::npos) f.erase(0, k + 1);
          static_cast<std::vector<std::pair<std::string, int>>*>(d)->emplace_back(f, line);
          return 0;
        },
        [](void*, const char*, int) {}, &frames);
    return frames;
  }
  /// The innermost frame outside the emulator's headers that has a line; else any with a line.
  static std::pair<std::string, int> best_of(const std::vector<std::pair<std::string, int>>& frames) {
    for (const auto& f : frames)
      if (!library(f.first) && f.second > 0) return f;
    for (const auto& f : frames)
      if (f.second > 0) return f;
    return {"<unknown>", 0};
  }
  std::pair<std::string, int> lookup(std::uintptr_t ra) {
    auto it = cache.find(ra);
    if (it != cache.end()) return it->second;
    std::pair<std::string, int> best = best_of(frames_at(ra - 1));
    if (best.second == 0) {
      // Code the compiler attributes to no line (line 0: merged or hoisted instructions): name the
      // function it belongs to, by the line where that function starts.
      std::uintptr_t start = 0;
      backtrace_syminfo(
          state, ra - 1,
          [](void* d, std::uintptr_t, const char*, std::uintptr_t symval, std::uintptr_t) {
            *static_cast<std::uintptr_t*>(d) = symval;
          },
          [](void*, const char*, int) {}, &start);
      if (start) best = best_of(frames_at(start));
    }
    return cache[ra] = best;
  }
};
Symbolizer& symbolizer() {
  // Never destroyed: a program's exit handlers (the playground's findings report) still ask.
  static Symbolizer* s = new Symbolizer;
  return *s;
}

}  // namespace

std::pair<std::string, int> detail::symbolize(std::uintptr_t ra) {
  // libbacktrace's state and the cache are shared: the metrics, the findings and the watch's
  // host accesses ask from different threads.
  static std::mutex* m = new std::mutex;  // never destroyed, as the symbolizer
  std::lock_guard<std::mutex> lock(*m);
  return symbolizer().lookup(ra);
}

double LineMetrics::efficiency() const {
  if (!units) return 1.0;
  if (shared) return static_cast<double>(ideal_units) / static_cast<double>(units);
  return std::min(1.0, static_cast<double>(bytes_requested) / (32.0 * static_cast<double>(units)));
}

namespace {
std::atomic<long long> g_checked_blocks{0}, g_blocks{0}, g_loop_blocks{0}, g_jam_blocks{0}, g_jam_refused{0};
std::atomic<int> g_sample{-1};  // -1: not decided yet (GPULAB_EMU_CHECKS decides)
bool sample_checks() {
  int v = g_sample.load(std::memory_order_relaxed);
  if (v < 0) {
    const char* e = std::getenv("GPULAB_EMU_CHECKS");
    v = e && std::string(e) == "sample" ? 1 : 0;
    g_sample.store(v, std::memory_order_relaxed);
  }
  return v == 1;
}
}  // namespace

void set_check_sampling(bool sample) { g_sample.store(sample ? 1 : 0); }

bool detail::block_is_checked(unsigned long long launch_id, unsigned long long id, unsigned long long blocks) {
  // The sample: the first and the last block (where a grid's edge cases are), and two more drawn
  // by a hash of the launch's number (the same whatever the workers, and from run to run). A
  // checked block costs a few hundred times an unchecked one, so the sample is kept to a fixed
  // few: the checks' share of a large grid's time stays small.
  constexpr unsigned kDrawn = 2;
  if (!sample_checks() || blocks <= kDrawn + 2 || id == 0 || id + 1 == blocks) return true;
  for (unsigned r = 0; r < kDrawn; ++r) {
    std::uint64_t h = (launch_id << 8) + r + 0x9e3779b97f4a7c15ull;  // splitmix64's finaliser
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    h ^= h >> 31;
    if (id == 1 + h % (blocks - 2)) return true;
  }
  return false;
}

void detail::count_checked_blocks(long long blocks, long long checked, long long loops) {
  g_blocks += blocks;
  g_checked_blocks += checked;
  g_loop_blocks += loops;
}

void detail::count_jam_check(bool apart) { ++(apart ? g_jam_blocks : g_jam_refused); }

CheckCoverage check_coverage() {
  return {g_checked_blocks.load(), g_blocks.load(), g_loop_blocks.load(), sample_checks(), g_jam_blocks.load(),
          g_jam_refused.load()};
}

bool metrics_available() {
#if defined(GPULAB_EMU_TRACING)
  return true;
#else
  return false;
#endif
}

void reset_metrics() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_totals.clear();
  g_dropped = 0;
}

long long metrics_dropped_accesses() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_dropped;
}

std::vector<LineMetrics> metrics_by_line() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::map<std::tuple<unsigned long long, std::string, int, int>, LineMetrics> merged;
  for (const auto& [k, t] : g_totals) {
    auto [file, line] = symbolize(k.ra);
    const std::string launch = std::string(k.launch_file ? k.launch_file : "?") + ":" + std::to_string(k.launch_line);
    if (line <= 0 && k.launch_file) {  // no line known: the launch's, never a line-0 row
      file = k.launch_file;
      line = k.launch_line;
    }
    LineMetrics& m = merged[{k.launch_id, file, line, k.flags}];
    m.launch_id = static_cast<long long>(k.launch_id);
    m.file = file;
    m.line = line;
    m.launch = launch;
    if (m.kernel.empty()) m.kernel = function_name(k.kernel);
    m.shared = k.flags & kShared;
    m.store = k.flags & kStore;
    m.atomic = k.flags & kAtomic;
    m.requests += t.requests;
    m.lane_accesses += t.lanes;
    m.bytes_requested += t.bytes;
    m.units += t.units;
    m.ideal_units += t.ideal;
    m.lines += t.lines;
    m.under_global_load += t.under_global_load;
    long long most = 0;
    for (const auto& [stride, count] : t.strides)
      if (count > most) {
        most = count;
        m.lane_stride_bytes = stride;
      }
  }
  std::vector<LineMetrics> out;
  for (auto& [k, m] : merged) out.push_back(m);
  return out;
}

std::string format_metrics(const std::vector<LineMetrics>& all) {
  std::ostringstream os;
  long long launch = -1;
  char buf[512];
  for (const auto& m : all) {
    if (m.launch_id != launch) {
      launch = m.launch_id;
      os << "launch " << launch << ": " << (m.kernel.empty() ? "kernel" : m.kernel) << " launched at " << m.launch << "\n";
      std::snprintf(buf, sizeof buf, "  %-28s %-14s %10s %22s %11s\n", "line", "access", "requests",
                    "per request (ideal)", "efficiency");
      os << buf;
    }
    const std::string name = m.file.substr(m.file.rfind('/') + 1) + ":" + std::to_string(m.line);
    const std::string kind = std::string(m.shared ? "shared " : "global ") + (m.atomic ? "atomic" : m.store ? "store" : "load");
    char per[64];
    std::snprintf(per, sizeof per, "%.2f %s (%.2f)", m.per_request(), m.shared ? "wavefr." : "sectors",
                  m.ideal_per_request());
    std::snprintf(buf, sizeof buf, "  %-28s %-14s %10lld %22s %10.1f%%\n", name.c_str(), kind.c_str(), m.requests, per,
                  100.0 * m.efficiency());
    os << buf;
  }
  return os.str();
}

std::vector<Finding> findings() {
  detail::drain_host_faults();
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<FindingRecord> sorted = g_findings;
  std::sort(sorted.begin(), sorted.end(), [](const FindingRecord& a, const FindingRecord& b) {
    return std::tie(a.block, a.kind, a.ra) < std::tie(b.block, b.kind, b.ra);
  });
  // Records are per instruction; a line can hold several (an unrolled loop): one finding per
  // (kind, line), described by its first record, counting them all.
  std::vector<Finding> out;
  std::map<std::tuple<int, std::string, int>, std::size_t> index;
  std::vector<const FindingRecord*> first;
  for (const auto& f : sorted) {
    auto [file, line] = symbolize(f.ra);
    if (line <= 0 && f.launch_file) {  // no line known: the launch's, never a line-0 finding
      file = f.launch_file;
      line = f.launch_line;
    }
    const auto [it, fresh] = index.emplace(std::make_tuple(f.kind, file, line), out.size());
    if (!fresh) {
      out[it->second].count += f.count;
      continue;
    }
    Finding r;
    r.kind = detail::finding_kind_name(f.kind);
    r.file = file;
    r.line = line;
    r.count = f.count;
    out.push_back(r);
    first.push_back(&f);
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    Finding& r = out[i];
    const std::string hint = detail::finding_hint(first[i]->kind);
    if (first[i]->other_ra) {
      const auto [ofile, oline] = symbolize(first[i]->other_ra);
      if (oline > 0) {
        r.other_file = ofile;
        r.other_line = oline;
      }
    }
    r.message = r.file + ":" + std::to_string(r.line) + ": " + first[i]->detail +
                (r.other_line > 0 ? "; the other access is at " + r.other_file + ":" + std::to_string(r.other_line)
                                  : std::string()) +
                (r.count > 1 ? " (seen " + std::to_string(r.count) + " times)" : "") +
                (hint.empty() ? "" : "\n  hint: " + hint);
  }
  return out;
}

long long findings_total() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_findings_total;
}

void reset_findings() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_findings.clear();
  g_findings_total = 0;
}

void set_sanitizer(bool on) { detail::set_sanitizer_enabled(on); }

}  // namespace gpulab::emu
