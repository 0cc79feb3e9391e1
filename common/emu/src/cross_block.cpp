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
// block that stored to it and the highest block that loaded it are kept, and whether another
// block stored (loaded) it too; the messages name each block's first store and first load of the
// allocation (or static data) at hand. A word stored by one
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
// different blocks to one word count as accesses of the word; block ids past 2^20 share one id.
//
// Cost: a table of 8 bytes per 4-byte word of each allocation a checked block touches, kept from
// launch to launch (an entry is tagged with its launch's generation, so nothing is cleared), and
// one compare-and-swap the first time a launch's block touches a word.
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

#include "internal.hpp"

namespace gpulab::emu::detail {
namespace {

// A word's entry: bits 48-63 the launch generation (another: the entry is empty), 28-47 the lowest
// storing block + 1 (0: none), 27 another block stored too, 7-26 the highest loading block + 1,
// 6 another block loaded too, 5 the highest loader loaded it before its block's first atomic,
// 4 listed as a candidate.
constexpr unsigned kGenShift = 48, kStoreShift = 28, kLoadShift = 7;
constexpr std::uint64_t kIdMask = (1ull << 20) - 1;
constexpr std::uint64_t kStoreSeveral = 1ull << 27, kLoadSeveral = 1ull << 6, kUnacquired = 1ull << 5,
                        kListed = 1ull << 4;
constexpr std::uint64_t kMaxBlock = kIdMask - 1;

std::uint64_t storer(std::uint64_t e) { return e >> kStoreShift & kIdMask; }  // block + 1
std::uint64_t loader(std::uint64_t e) { return e >> kLoadShift & kIdMask; }

/// A plain store and a plain load of one word seen in different blocks (or by several).
bool conflicting(std::uint64_t e) {
  return storer(e) && loader(e) && (storer(e) != loader(e) || (e & (kStoreSeveral | kLoadSeveral)));
}

/// The entry after block `id` (+1) stored or loaded the word, in launch generation `gen`.
std::uint64_t merged(std::uint64_t e, std::uint64_t gen, std::uint64_t id, bool store, bool unacquired) {
  if (e >> kGenShift != gen) e = gen << kGenShift;
  if (store) {
    const std::uint64_t s = storer(e);
    if (s == 0 || id < s) e = (e & ~(kIdMask << kStoreShift)) | id << kStoreShift | (s ? kStoreSeveral : 0);
    else if (id != s) e |= kStoreSeveral;
    return e;
  }
  const std::uint64_t l = loader(e);
  if (l == 0 || id > l)
    e = (e & ~(kIdMask << kLoadShift | kUnacquired)) | id << kLoadShift | (l ? kLoadSeveral : 0) |
        (unacquired ? kUnacquired : 0);
  else if (id != l) e |= kLoadSeveral;
  else if (unacquired) e |= kUnacquired;
  return e;
}

/// One region's entries (an allocation's, or the static data's), kept from launch to launch.
struct Table {
  std::uintptr_t base = 0;
  std::size_t words = 0;
  std::atomic<std::uint64_t>* entries = nullptr;
  bool used = false;  ///< by the running launch
};

std::mutex g_tables_mutex;
std::map<std::uintptr_t, Table> g_tables;  // by base
std::uint64_t g_generation = 0;

void unmap(Table& t) {
  if (t.entries) munmap(t.entries, std::max<std::size_t>(t.words, 1) * 8);
  t.entries = nullptr;
}

/// The table of [base, base + words * 4), made (all empty) where there is none of that extent.
std::atomic<std::uint64_t>* table_of(std::uintptr_t base, std::size_t words) {
  std::lock_guard<std::mutex> lock(g_tables_mutex);
  Table& t = g_tables[base];
  if (t.entries && t.words != words) unmap(t);  // a freed allocation's address, reused
  if (!t.entries) {
    // Tables up to 64 MiB are faulted in at once: the launch's first access to each page would
    // otherwise fault twice (a read maps the zero page, the following write copies it), which cost
    // 10-35% of a reference's run on the emulator; larger tables stay lazy (most of their pages are
    // never touched by the small grids that use them).
    const std::size_t bytes = std::max<std::size_t>(words, 1) * 8;
    const int populate = bytes <= (std::size_t{64} << 20) ? MAP_POPULATE : 0;
    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | populate,
                   -1, 0);
    if (m == MAP_FAILED) return nullptr;
    t = Table{base, words, static_cast<std::atomic<std::uint64_t>*>(m), false};
  }
  t.used = true;
  return t.entries;
}

/// A new launch's generation. When the tag wraps (every 65535 launches) every table is emptied;
/// when many tables of allocations the launch does not use are kept, they go.
std::uint64_t next_generation(const Launch& L) {
  std::lock_guard<std::mutex> lock(g_tables_mutex);
  if (++g_generation >= (1ull << 16)) {
    g_generation = 1;
    for (auto& [base, t] : g_tables)
      if (t.entries) madvise(t.entries, std::max<std::size_t>(t.words, 1) * 8, MADV_DONTNEED);
  }
  if (g_tables.size() > 64)
    for (auto it = g_tables.begin(); it != g_tables.end();) {
      const bool live = std::any_of(L.allocations.begin(), L.allocations.end(),
                                    [&](const auto& a) { return a.first == it->first; });
      if (live || it->second.used) {
        ++it;
        continue;
      }
      unmap(it->second);
      it = g_tables.erase(it);
    }
  for (auto& [base, t] : g_tables) t.used = false;
  return g_generation;
}

}  // namespace

/// One launch's view of the tables, and what its blocks did.
struct CrossBlockState {
  std::uint64_t generation = 0;
  std::size_t regions = 0;
  std::unique_ptr<std::atomic<std::atomic<std::uint64_t>*>[]> tables;  // per region, on first use
  std::vector<std::uintptr_t> bases;
  std::vector<std::size_t> words;
  std::size_t blocks = 0;  ///< blocks with a record below (the first 2^16)
  /// Per block and region: the instruction of the block's first store / load there.
  std::vector<std::uintptr_t> first_store, first_load;
  /// Per block: 1 once it ended with its plain stores handed over (fence, then atomic).
  std::vector<std::uint8_t> released;
  std::mutex mutex;
  std::vector<std::pair<std::size_t, std::size_t>> candidates;  // (region, word)
};

namespace {

bool enabled() {
  static const bool on = emu_defence_on("cross-block-races");
  return on;
}

std::atomic<std::uint64_t>* region_table(CrossBlockState& s, std::size_t region) {
  std::atomic<std::uint64_t>* t = s.tables[region].load(std::memory_order_acquire);
  if (!t) {
    t = table_of(s.bases[region], s.words[region]);
    s.tables[region].store(t, std::memory_order_release);
  }
  return t;
}

void list_candidate(CrossBlockState& s, std::size_t region, std::size_t word) {
  std::lock_guard<std::mutex> lock(s.mutex);
  s.candidates.emplace_back(region, word);
}

/// Notes the running block's first store / load in the region (its instruction names the block's
/// accesses there in a finding).
void note_first(Worker& w, CrossBlockState& s, std::size_t region, bool store, std::uintptr_t ra) {
  if (w.cross_seen.size() != s.regions) w.cross_seen.assign(s.regions, 0);
  const std::uint8_t bit = store ? 1 : 2;
  if (w.cross_seen[region] & bit) return;
  w.cross_seen[region] |= bit;
  if (w.block_id < s.blocks) (store ? s.first_store : s.first_load)[w.block_id * s.regions + region] = ra;
}

}  // namespace

void cross_block_begin_launch(Launch& L) {
  L.cross = nullptr;
  if (!enabled()) return;
  auto* s = new CrossBlockState;
  s->generation = next_generation(L);
  s->regions = L.allocations.size() + 1;
  s->tables.reset(new std::atomic<std::atomic<std::uint64_t>*>[s->regions]());
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
  s->blocks = static_cast<std::size_t>(std::min<unsigned long long>(nblocks, 1ull << 16));
  s->first_store.assign(s->blocks * s->regions, 0);
  s->first_load.assign(s->blocks * s->regions, 0);
  s->released.assign(std::min<unsigned long long>(nblocks, kMaxBlock + 1), 0);
  L.cross = s;
}

void cross_block_access(Worker& w, std::size_t region, std::uintptr_t a, unsigned size, bool store, std::uintptr_t ra) {
  CrossBlockState& s = *w.launch->cross;
  std::atomic<std::uint64_t>* t = region_table(s, region);
  if (!t) return;
  note_first(w, s, region, store, ra);
  const std::uint64_t id = std::min<std::uint64_t>(w.block_id, kMaxBlock - 1) + 1;
  const bool unacquired = !store && !w.cross_acquired;
  const std::uintptr_t base = s.bases[region];
  const std::size_t last = std::min<std::size_t>((a + size - 1 - base) / 4, s.words[region] - 1);
  for (std::size_t word = (a - base) / 4; word <= last; ++word) {
    std::uint64_t old = t[word].load(std::memory_order_relaxed);
    std::uint64_t now = merged(old, s.generation, id, store, unacquired);
    while (now != old && !t[word].compare_exchange_weak(old, now, std::memory_order_relaxed))
      now = merged(old, s.generation, id, store, unacquired);
    if ((now & kListed) || !conflicting(now)) continue;
    if (!(t[word].fetch_or(kListed, std::memory_order_relaxed) & kListed)) list_candidate(s, region, word);
  }
}

void cross_block_begin_block(Worker& w) {
  w.cross_acquired = w.cross_fenced = w.cross_released = w.cross_stored = false;
  std::fill(w.cross_seen.begin(), w.cross_seen.end(), 0);
}

void cross_block_end_block(Worker& w) {
  CrossBlockState* s = w.launch->cross;
  if (!s || w.block_id >= s->released.size()) return;
  s->released[w.block_id] = !w.cross_stored || w.cross_released;  // (each block is one worker's)
}

namespace {

/// "4 bytes at hist + 12" / "4 bytes of the static variable 'stage' (offset 12)".
std::string word_text(const Launch& L, const CrossBlockState& s, std::size_t region, std::size_t word) {
  if (region < L.allocations.size())
    return describe_device_bytes(L.allocations[region].first, L.allocations[region].second, word * 4, 4);
  return "4 bytes of " + static_data_label(s.bases[region] + word * 4);
}

std::string block_name(const Launch& L, std::uint64_t id) {
  const dim3 g = L.grid;
  return "block (" + std::to_string(id % g.x) + "," + std::to_string(id / g.x % g.y) + "," +
         std::to_string(id / (static_cast<std::uint64_t>(g.x) * g.y)) + ")";
}

std::uintptr_t first_of(const CrossBlockState& s, const std::vector<std::uintptr_t>& v, std::uint64_t block,
                        std::size_t region) {
  return block < s.blocks ? v[block * s.regions + region] : 0;
}

/// The finding of one conflicting word (the lowest storer, the highest loader), or false when the
/// blocks handed it over.
bool describe(const Launch& L, const CrossBlockState& s, std::size_t region, std::size_t word, std::uint64_t e,
              FindingRecord& f) {
  const std::uint64_t writer = storer(e) - 1, reader = loader(e) - 1;
  const bool handed_over = !(e & (kStoreSeveral | kLoadSeveral | kUnacquired)) && writer < s.released.size() &&
                           s.released[writer];
  if (handed_over) return false;
  f.kind = kCrossBlockRace;
  f.other_ra = first_of(s, s.first_store, writer, region);
  f.ra = first_of(s, s.first_load, reader, region);
  if (!f.ra) f.ra = f.other_ra;
  f.block = std::min(writer, reader);
  f.launch_file = L.file;
  f.launch_line = L.line;
  const std::string what = word_text(L, s, region, word);
  if (writer != reader)
    f.detail = block_name(L, reader) + " reads " + what + ", which " + block_name(L, writer) + " writes";
  else if (e & kStoreSeveral)
    f.detail = block_name(L, reader) + " reads " + what + ", which another block writes too";
  else
    f.detail = block_name(L, writer) + " writes " + what + ", which another block reads";
  f.detail += " in the same launch, with no __threadfence() and atomic handing it over (cross-block race: the"
              " blocks of a launch run at the same time on a GPU, so the read may come before or after the"
              " write, and a read-modify-write by two blocks loses one of the updates)";
  return true;
}

}  // namespace

void cross_block_end_launch(Launch& L) {
  std::unique_ptr<CrossBlockState> s(L.cross);
  L.cross = nullptr;
  if (!s || L.fault_block.load() != ~0ull) return;  // a launch that faulted is not judged
  // One finding per instruction pair, described by its lowest word.
  std::map<std::pair<std::uintptr_t, std::uintptr_t>, FindingRecord> found;
  std::sort(s->candidates.begin(), s->candidates.end());
  for (const auto& [region, word] : s->candidates) {
    const std::uint64_t e = s->tables[region].load()[word].load();
    FindingRecord f;
    if (!conflicting(e) || !describe(L, *s, region, word, e, f)) continue;
    FindingRecord& kept = found[{f.ra, f.other_ra}];
    const long long count = kept.count + 1;
    if (count == 1) kept = f;
    kept.count = count;
  }
  for (auto& [key, f] : found) add_finding(f);
}

}  // namespace gpulab::emu::detail
