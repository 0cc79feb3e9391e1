// The sanitizer's check of device memory between the blocks of one launch.
//
// The blocks of a launch run at the same time on a GPU, in no order the program can rely on. A
// 4-byte word that one block stores to with a plain store and another block loads with a plain
// load is a race: a histogram updated without atomics by several blocks (each block's load and
// store of a bin interleave with the others', and updates are lost), or a block reading what
// another block has or has not written yet. The emulator runs a block to its end before the
// next one on each worker, so such code usually computes the right result there: it is found by
// this check instead, the same way every run.
//
// The rule. For each word touched by plain (non-atomic) accesses of checked blocks, the lowest
// block that stored to it and the highest block that loaded it are kept, each with the first
// instruction it did so at, and whether another block stored (loaded) it too. A word stored by one
// block and loaded by another is a finding, unless the blocks handed the data over as CUDA's
// programming guide shows (the "last block" reduction of lab 04): the storing block executed a
// __threadfence() and then an atomic after its last plain store to device memory, and the loading
// block loaded the word only after an atomic of its own, and no third block stored or loaded it.
// Atomics are not kept: they are the synchronisation. Stores alone (many blocks setting a flag)
// are no finding. The result depends on what each block accesses, not on the order in which the
// workers ran them; a launch that faulted is not judged (the blocks after the fault did not run).
//
// What it does not see: a lock built from atomics around plain accesses, or a fence and an
// atomic whose result the program ignores, count as the hand-over above; sub-word accesses of
// different blocks to one word count as accesses of the word; block ids past 2^21 share one id.
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <link.h>
#include <map>
#include <mutex>

#include "internal.hpp"

namespace gpulab::emu::detail {
namespace {

// A kept access: bit 63 valid, 62 several blocks, 61 (loads) a load made before the block's first
// atomic, 60 (loads) already listed as a candidate, 39..59 the block, 0..38 the instruction's
// offset in the executable.
constexpr std::uint64_t kValid = 1ull << 63, kSeveral = 1ull << 62, kUnacquired = 1ull << 61, kListed = 1ull << 60;
constexpr unsigned kBlockShift = 39;
constexpr std::uint64_t kBlockMask = (1ull << 21) - 1, kRaMask = (1ull << kBlockShift) - 1;

std::uint64_t block_of(std::uint64_t v) { return v >> kBlockShift & kBlockMask; }

std::uintptr_t text_base() {
  static const std::uintptr_t base = [] {
    std::uintptr_t b = 0;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* d) {
          *static_cast<std::uintptr_t*>(d) = info->dlpi_addr;
          return 1;  // the first module listed is the executable
        },
        &b);
    return b;
  }();
  return base;
}
std::uint64_t ra_bits(std::uintptr_t ra) {
  const std::uintptr_t b = text_base();
  return ra >= b && ra - b <= kRaMask ? ra - b : 0;
}
std::uintptr_t ra_of(std::uint64_t v) { return (v & kRaMask) ? text_base() + (v & kRaMask) : 0; }

/// A plain store and a plain load of one word seen in different blocks (or by several).
bool conflicting(std::uint64_t store, std::uint64_t load) {
  return (store & kValid) && (load & kValid) &&
         (block_of(store) != block_of(load) || ((store | load) & kSeveral));
}

struct CrossWord {
  std::atomic<std::uint64_t> store, load;
};

}  // namespace

/// One launch's words, per region: each of its device allocations, then the executable's static
/// data. Each region's table is mapped on its first access (pages nobody touches cost nothing).
struct CrossBlockState {
  std::size_t regions = 0;
  std::unique_ptr<std::atomic<CrossWord*>[]> tables;
  std::vector<std::size_t> words;
  std::vector<std::uintptr_t> bases;
  /// Per block (the first 2^21): 1 once it ended with its plain stores handed over (fence, then
  /// atomic), 0 else.
  std::vector<std::uint8_t> released;
  std::mutex mutex;
  std::vector<std::pair<std::size_t, std::size_t>> candidates;  // (region, word)
};

namespace {

bool g_enabled_checked = false, g_enabled = true;
bool enabled() {
  if (!g_enabled_checked) {
    g_enabled = emu_defence_on("cross-block-races");
    g_enabled_checked = true;
  }
  return g_enabled;
}

CrossWord* table(CrossBlockState& s, std::size_t region) {
  CrossWord* t = s.tables[region].load(std::memory_order_acquire);
  if (t) return t;
  const std::size_t bytes = std::max<std::size_t>(s.words[region], 1) * sizeof(CrossWord);
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  CrossWord* expected = nullptr;
  if (!s.tables[region].compare_exchange_strong(expected, static_cast<CrossWord*>(m))) {
    munmap(m, bytes);
    return expected;
  }
  return static_cast<CrossWord*>(m);
}

/// Merges one block's access into a kept access (the lowest storer or the highest loader).
std::uint64_t merged(std::uint64_t old, std::uint64_t block, std::uint64_t ra, bool lowest, bool unacquired) {
  const std::uint64_t mine = kValid | block << kBlockShift | ra | (unacquired ? kUnacquired : 0);
  if (!(old & kValid)) return mine;
  const std::uint64_t b = block_of(old);
  if (b == block) return unacquired ? old | kUnacquired : old;
  const bool replace = lowest ? block < b : block > b;
  return (replace ? mine : old) | kSeveral | (old & kListed);
}

void list_candidate(CrossBlockState& s, std::size_t region, std::size_t word) {
  std::lock_guard<std::mutex> lock(s.mutex);
  s.candidates.emplace_back(region, word);
}

}  // namespace

void cross_block_begin_launch(Launch& L) {
  L.cross = nullptr;
  if (!enabled()) return;
  auto* s = new CrossBlockState;
  s->regions = L.allocations.size() + 1;
  s->tables.reset(new std::atomic<CrossWord*>[s->regions]());
  for (const auto& [base, bytes] : L.allocations) {
    s->bases.push_back(base);
    s->words.push_back((bytes + 3) / 4);
  }
  std::uintptr_t sb = 0;
  std::size_t sbytes = 0;
  static_data_range(sb, sbytes);
  s->bases.push_back(sb);
  s->words.push_back((sbytes + 3) / 4);
  const unsigned long long nblocks = static_cast<unsigned long long>(L.grid.x) * L.grid.y * L.grid.z;
  s->released.assign(std::min<unsigned long long>(nblocks, kBlockMask + 1), 0);
  L.cross = s;
}

void cross_block_access(Worker& w, std::size_t region, std::uintptr_t a, unsigned size, bool store, std::uintptr_t ra) {
  CrossBlockState* s = w.launch->cross;
  if (!s) return;
  CrossWord* t = table(*s, region);
  if (!t) return;
  const std::uint64_t block = std::min<std::uint64_t>(w.block_id, kBlockMask);
  const std::uintptr_t base = s->bases[region];
  const bool unacquired = !store && !w.cross_acquired;
  for (std::uintptr_t word = (a - base) / 4; word <= (a + size - 1 - base) / 4 && word < s->words[region]; ++word) {
    std::atomic<std::uint64_t>& mine = store ? t[word].store : t[word].load;
    std::uint64_t old = mine.load(std::memory_order_relaxed);
    std::uint64_t now = merged(old, block, ra_bits(ra), store, unacquired);
    while (now != old && !mine.compare_exchange_weak(old, now, std::memory_order_relaxed))
      now = merged(old, block, ra_bits(ra), store, unacquired);
    const std::uint64_t load = t[word].load.load(std::memory_order_relaxed);
    if ((load & kListed) || !conflicting(t[word].store.load(std::memory_order_relaxed), load)) continue;
    if (!(t[word].load.fetch_or(kListed, std::memory_order_relaxed) & kListed)) list_candidate(*s, region, word);
  }
}

void cross_block_note_store(Worker& w) {
  w.cross_stored = true;
  w.cross_fenced = false;
  w.cross_released = false;
}
void cross_block_note_fence(Worker& w) { w.cross_fenced = true; }
void cross_block_note_atomic(Worker& w) {
  w.cross_acquired = true;
  if (w.cross_fenced) w.cross_released = true;
}

void cross_block_begin_block(Worker& w) {
  w.cross_acquired = w.cross_fenced = w.cross_released = w.cross_stored = false;
}

void cross_block_end_block(Worker& w) {
  CrossBlockState* s = w.launch->cross;
  if (!s || w.block_id >= s->released.size()) return;
  s->released[w.block_id] = !w.cross_stored || w.cross_released;  // (each block is one worker's)
}

namespace {

/// "4 bytes at hist + 12" / "4 bytes of the static variable 'stage' (offset 12)".
std::string word_text(const Launch& L, const CrossBlockState& s, std::size_t region, std::size_t word) {
  const std::uintptr_t a = s.bases[region] + word * 4;
  if (region < L.allocations.size())
    return describe_device_bytes(L.allocations[region].first, L.allocations[region].second, word * 4, 4);
  return "4 bytes of " + static_data_label(a);
}

std::string block_name(const Launch& L, std::uint64_t id) {
  const dim3 g = L.grid;
  return "block (" + std::to_string(id % g.x) + "," + std::to_string(id / g.x % g.y) + "," +
         std::to_string(id / (static_cast<std::uint64_t>(g.x) * g.y)) + ")";
}

}  // namespace

void cross_block_end_launch(Launch& L) {
  CrossBlockState* s = L.cross;
  if (!s) return;
  L.cross = nullptr;
  const bool judged = L.fault_block.load() == ~0ull;
  // One finding per instruction pair, described by its lowest word of the lowest blocks.
  struct Found {
    FindingRecord f;
    std::uintptr_t key = 0;
  };
  std::map<std::pair<std::uintptr_t, std::uintptr_t>, Found> found;
  std::sort(s->candidates.begin(), s->candidates.end());
  for (const auto& [region, word] : judged ? s->candidates : decltype(s->candidates){}) {
    const CrossWord& c = s->tables[region].load()[word];
    const std::uint64_t st = c.store.load(), ld = c.load.load();
    if (!conflicting(st, ld)) continue;
    const bool handed_over = !((st | ld) & kSeveral) && !(ld & kUnacquired) && block_of(st) < s->released.size() &&
                             s->released[block_of(st)];
    if (handed_over) continue;
    Found& e = found[{ra_of(ld), ra_of(st)}];
    if (e.f.count++ > 0) continue;
    const std::uint64_t writer = block_of(st), reader = block_of(ld);
    e.f.kind = kCrossBlockRace;
    e.f.ra = ra_of(ld) ? ra_of(ld) : ra_of(st);
    e.f.other_ra = ra_of(st);
    e.f.block = std::min(writer, reader);
    e.f.launch_file = L.file;
    e.f.launch_line = L.line;
    const std::string what = word_text(L, *s, region, word);
    if (writer != reader)
      e.f.detail = block_name(L, reader) + " reads " + what + ", which " + block_name(L, writer) + " writes";
    else if (st & kSeveral)
      e.f.detail = block_name(L, reader) + " reads " + what + ", which another block writes too";
    else
      e.f.detail = block_name(L, writer) + " writes " + what + ", which another block reads";
    e.f.detail += " in the same launch, with no __threadfence() and atomic handing it over (cross-block race: the"
                  " blocks of a launch run at the same time on a GPU, so the read may come before or after the"
                  " write, and a read-modify-write by two blocks loses one of the updates)";
  }
  for (auto& [key, e] : found) add_finding(e.f);
  for (std::size_t r = 0; r < s->regions; ++r)
    if (CrossWord* t = s->tables[r].load())
      munmap(t, std::max<std::size_t>(s->words[r], 1) * sizeof(CrossWord));
  delete s;
}

}  // namespace gpulab::emu::detail
