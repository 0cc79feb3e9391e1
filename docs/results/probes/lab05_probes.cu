// Lab 05's probes for the lesson's H200 tables (built and run by docs/results/lab05-gpu.sh with
// nvcc; cuda only). Each probe prints tab-separated rows: probe, variant, parameter, value(s).
//
//   gather_scatter   reorder of position + velocity over a random order: gather vs scatter vs a
//                    float4 copy of the same bytes (GB/s of 68 useful bytes per particle)
//   cell_order       density over the reordered state: linear order (rows of 3 cells merged, and
//                    27 separate cells) vs Morton order (27 cells), and through the index
//   reorder_every    a short simulated motion: keys and sort every frame, the state reordered
//                    every N-th frame (N = 1, 4, 8, never after the first); mean frame time and
//                    the last frame's density time; without reorders, the density's time 1, 2, 4,
//                    ... 32 frames after the last one (reorder_decay: how locality decays). Frames
//                    that do not reorder read through the index with the grader's kernel (27 cells)
//   break_even       density through the index vs reorder + density over the reordered state,
//                    for 84 down to 2 neighbours per particle
//   sort             keys + counting sort (the reference) vs keys + CUB radix sort
//
// The kernels are the lab's reference (solutions/05-particle-reorder) and the grader's baselines
// (grader/labs/05-particle-reorder), included here so that the probes time exactly what the lab
// grades. Times: CUDA events, the L2 flushed before each run, median of 15 runs.
// Usage: lab05_probes [n] [once]   (once: the cell_order kernels one time each, for ncu)
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "../../../grader/labs/05-particle-reorder/reference.hpp"
#include "../../../solutions/05-particle-reorder/particle_reorder.cu"
#include "../../../grader/labs/05-particle-reorder/cub_frame.cu"

#include "cuda_check.hpp"
#include "event_timer.hpp"

namespace probe {

int runs = 15;  // 0: each kernel once (for a profiler)

template <class T>
T* upload(const std::vector<T>& v) {
  T* d = nullptr;
  CHECK(cudaMalloc(&d, std::max<std::size_t>(1, v.size()) * sizeof(T)));
  CHECK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <class T>
T* scratch(std::size_t n) {
  T* d = nullptr;
  CHECK(cudaMalloc(&d, std::max<std::size_t>(1, n) * sizeof(T)));
  return d;
}

struct Flush {
  void* buf = nullptr;
  std::size_t bytes = 256u << 20;  // > 5x the H200's L2
  Flush() { CHECK(cudaMalloc(&buf, bytes)); }
  void operator()() { CHECK(cudaMemsetAsync(buf, 0, bytes)); }
} *flusher;

/// Median time in ms of `run` (enqueued work), the L2 flushed before each.
template <class F>
double time_ms(F run) {
  return median_event_ms(run, runs, true, [] { (*flusher)(); });
}

__global__ void scatter_state(const int* __restrict__ rank, int n, const float4* __restrict__ pos,
                              const float4* __restrict__ vel, float4* __restrict__ spos, float4* __restrict__ svel) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int k = rank[i];
  spos[k] = pos[i];
  svel[k] = vel[i];
}

__global__ void copy4(const float4* __restrict__ a, float4* __restrict__ b, long long count) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) b[i] = a[i];
}

// One step of motion: x += v dt, reflected at the walls (the particles stay in the box).
__global__ void move(float4* pos, float4* vel, int n, float dt, float3 wall) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 p = pos[i], v = vel[i];
  float* pc[3] = {&p.x, &p.y, &p.z};
  float* vc[3] = {&v.x, &v.y, &v.z};
  const float w[3] = {wall.x, wall.y, wall.z};
  for (int a = 0; a < 3; ++a) {
    float x = *pc[a] + *vc[a] * dt;
    if (x < 0) x = -x, *vc[a] = -*vc[a];
    if (x > w[a]) x = 2 * w[a] - x, *vc[a] = -*vc[a];
    *pc[a] = fminf(fmaxf(x, 0.0f), w[a]);
  }
  pos[i] = p;
  vel[i] = v;
}

int blocks(long long n) { return static_cast<int>((n + 255) / 256); }

struct Device {
  int n = 0, keys = 0;
  Grid g{};
  float4 *pos, *vel, *spos, *svel;
  unsigned *cell, *start, *scr;
  int *index, *rank;
  float* density;
  explicit Device(const lab05::Problem& p, CellOrder order) : n(p.n()), keys(num_keys(p.grid, order)), g(p.grid) {
    pos = upload(p.position);
    vel = upload(p.velocity);
    spos = scratch<float4>(n);
    svel = scratch<float4>(n);
    cell = scratch<unsigned>(n);
    start = scratch<unsigned>(keys + 1);
    scr = scratch<unsigned>(sort_scratch_elements(keys));
    index = scratch<int>(n);
    rank = scratch<int>(n);
    density = scratch<float>(n);
  }
  void sort(CellOrder order) {
    compute_cells(pos, n, g, order, cell);
    sort_by_cell(cell, n, keys, start, index, rank, scr);
  }
};

/// A problem of n particles whose density gives about `neighbours` neighbours within h.
lab05::Problem problem(int n, double neighbours, std::uint64_t seed) {
  lab05::Problem p = lab05::make_problem(n, std::mt19937_64(seed));
  if (neighbours != 84.0) {  // same particles, the radius scaled: (84 / neighbours)^(1/3) fewer per h
    const double s = std::cbrt(neighbours / 84.0);
    const float h = static_cast<float>(p.grid.h * s);
    const float walls[3] = {p.grid.gx * p.grid.h, p.grid.gy * p.grid.h, p.grid.gz * p.grid.h};
    p.grid.gx = std::max(1, static_cast<int>(std::ceil(walls[0] / h)));
    p.grid.gy = std::max(1, static_cast<int>(std::ceil(walls[1] / h)));
    p.grid.gz = std::max(1, static_cast<int>(std::ceil(walls[2] / h)));
    p.grid.h = h;
    p.grid.inv_h = 1.0f / h;
    p.grid.poly6 = static_cast<float>(315.0 / (64.0 * 3.14159265358979323846 * std::pow(double(h), 9)));
  }
  return p;
}

void gather_scatter(int n) {
  Device d(problem(n, 84, 1), CellOrder::linear);
  d.sort(CellOrder::linear);
  const double useful = 68.0 * n;
  const double tg = time_ms([&] { reorder_state(d.index, d.rank, n, d.pos, d.vel, d.spos, d.svel); });
  const double ts = time_ms([&] { scatter_state<<<blocks(n), 256>>>(d.rank, n, d.pos, d.vel, d.spos, d.svel); });
  float4* a = scratch<float4>(static_cast<std::size_t>(useful / 32) + 1);
  float4* b = scratch<float4>(static_cast<std::size_t>(useful / 32) + 1);
  const long long count = static_cast<long long>(useful / 32);  // half read, half written
  const double tc = time_ms([&] { copy4<<<blocks(count), 256>>>(a, b, count); });
  std::printf("gather_scatter\tcopy\t%d\t%.4f ms\t%.1f GB/s\n", n, tc, useful / tc / 1e6);
  std::printf("gather_scatter\tgather\t%d\t%.4f ms\t%.1f GB/s\t%.2f of copy\n", n, tg, useful / tg / 1e6, tc / tg);
  std::printf("gather_scatter\tscatter\t%d\t%.4f ms\t%.1f GB/s\t%.2f of copy\n", n, ts, useful / ts / 1e6, tc / ts);
}

void cell_order(int n) {
  for (CellOrder order : {CellOrder::linear, CellOrder::morton}) {
    Device d(problem(n, 84, 2), order);
    d.sort(order);
    reorder_state(d.index, d.rank, n, d.pos, d.vel, d.spos, d.svel);
    const char* name = order == CellOrder::linear ? "linear" : "morton";
    const double t_ref = time_ms([&] { sph_density(d.pos, d.index, d.spos, d.start, n, d.g, order, d.density); });
    const double t_27 = time_ms([&] {
      lab05_baseline::density<false><<<blocks(n), 256>>>(d.spos, nullptr, d.start, n, d.g, order, d.density);
    });
    const double t_ind = time_ms([&] {
      lab05_baseline::density<true><<<blocks(n), 256>>>(d.pos, d.index, d.start, n, d.g, order, d.density);
    });
    std::printf("cell_order\t%s reordered (reference)\t%d\t%.4f ms\n", name, n, t_ref);
    std::printf("cell_order\t%s reordered, 27 cells\t%d\t%.4f ms\n", name, n, t_27);
    std::printf("cell_order\t%s through the index\t%d\t%.4f ms\t%.2fx slower than the reference\n", name, n, t_ind,
                t_ind / t_ref);
  }
}

// Frames of motion; the state (pos, vel) is permuted by a reorder every `every` frames (0: only
// before the first frame), so between reorders the density reads it through the sorted index,
// which drifts away from the identity as particles cross cell faces.
void reorder_every(int n, int frames) {
  const lab05::Problem p = problem(n, 84, 3);
  const float3 wall = {p.grid.gx * p.grid.h, p.grid.gy * p.grid.h, p.grid.gz * p.grid.h};
  // Velocity components are uniform in (-1, 1) (speeds about 1): a particle moves about 0.05 h a frame.
  const float dt = 0.05f * p.grid.h;
  for (int every : {1, 4, 8, 0}) {
    Device d(p, CellOrder::linear);
    d.sort(CellOrder::linear);  // the first frame starts from a sorted state
    reorder_state(d.index, d.rank, n, d.pos, d.vel, d.spos, d.svel);
    std::swap(d.pos, d.spos);
    std::swap(d.vel, d.svel);
    cudaEvent_t a, m, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&m));
    CHECK(cudaEventCreate(&b));
    double total = 0, last_density = 0;
    for (int f = 1; f <= frames; ++f) {
      move<<<blocks(n), 256>>>(d.pos, d.vel, n, dt, wall);
      (*flusher)();
      CHECK(cudaEventRecord(a));
      d.sort(CellOrder::linear);
      const bool reorder = every > 0 && f % every == 0;
      if (reorder) reorder_state(d.index, d.rank, n, d.pos, d.vel, d.spos, d.svel);
      CHECK(cudaEventRecord(m));
      if (reorder) {
        sph_density(d.pos, d.index, d.spos, d.start, n, d.g, CellOrder::linear, d.density);
      } else {
        lab05_baseline::density<true><<<blocks(n), 256>>>(d.pos, d.index, d.start, n, d.g, CellOrder::linear, d.density);
      }
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float ms = 0, density_ms = 0;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      CHECK(cudaEventElapsedTime(&density_ms, m, b));
      total += ms;
      // Locality decay: without reorders, the density through the index of a state sorted f frames ago.
      if (every == 0 && (f & (f - 1)) == 0)
        std::printf("reorder_decay\tframes since the reorder\t%d\t%.4f ms density (one run)\n", f, density_ms);
      if (f == frames)  // the density of the last frame again, as it ran (reordered or through the index)
        last_density = time_ms([&] {
          if (reorder) sph_density(d.pos, d.index, d.spos, d.start, n, d.g, CellOrder::linear, d.density);
          else lab05_baseline::density<true><<<blocks(n), 256>>>(d.pos, d.index, d.start, n, d.g, CellOrder::linear, d.density);
        });
      if (reorder) std::swap(d.pos, d.spos), std::swap(d.vel, d.svel);
    }
    std::printf("reorder_every\tN = %s\t%d\t%.4f ms per frame (mean of %d)\tthe last frame's density: %.4f ms\n",
                every ? std::to_string(every).c_str() : "never", n, total / frames, frames, last_density);
  }
}

void break_even(int n) {
  for (double nb : {84.0, 40.0, 20.0, 10.0, 5.0, 2.0}) {
    Device d(problem(n, nb, 4), CellOrder::linear);
    d.sort(CellOrder::linear);
    const double t_ind = time_ms([&] {
      lab05_baseline::density<true><<<blocks(n), 256>>>(d.pos, d.index, d.start, n, d.g, CellOrder::linear, d.density);
    });
    const double t_gather = time_ms([&] { reorder_state(d.index, d.rank, n, d.pos, d.vel, d.spos, d.svel); });
    const double t_re = time_ms([&] { sph_density(d.pos, d.index, d.spos, d.start, n, d.g, CellOrder::linear, d.density); });
    std::printf("break_even\t%g neighbours\t%d\tthrough index %.4f ms\treorder %.4f ms + density %.4f ms = %.4f ms\t%s\n",
                nb, n, t_ind, t_gather, t_re, t_gather + t_re, t_gather + t_re < t_ind ? "reorder pays" : "reorder does not pay");
  }
}

void sort(int n) {
  Device d(problem(n, 84, 5), CellOrder::linear);
  const std::size_t bytes = lab05_cub_sort_scratch_bytes(n);
  void* cub_scratch = scratch<unsigned char>(bytes);
  const double t_count = time_ms([&] { d.sort(CellOrder::linear); });
  const double t_cub = time_ms([&] { lab05_cub_sort(d.pos, n, d.g, d.start, d.index, d.rank, cub_scratch, bytes); });
  std::printf("sort\tcounting sort (reference)\t%d\t%.4f ms\t%d keys\n", n, t_count, d.keys);
  std::printf("sort\tCUB radix sort\t%d\t%.4f ms\t%.2fx the counting sort's time\n", n, t_cub, t_cub / t_count);
}

}  // namespace probe

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1 << 21;
  probe::flusher = new probe::Flush;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# %s, n = %d\n", prop.name, n);
  if (argc > 2 && std::string(argv[2]) == "once") {  // each density variant once, for Nsight Compute
    probe::runs = 0;
    probe::cell_order(n);
    return 0;
  }
  probe::gather_scatter(n);
  probe::cell_order(n);
  probe::reorder_every(n, 32);
  probe::break_even(n);
  probe::sort(n);
  return 0;
}
