// The performance model's pieces that need no emulator: nvcc's PTX read for the loads per loop
// trip and their source lines, the H200's read bandwidth by bytes in flight, and the roofline's store
// term (gpulab/grade/perfmodel.hpp).
#include <gtest/gtest.h>

#include "gpulab/grade/perfmodel.hpp"

namespace pm = gpulab::grade::perfmodel;

namespace {

// The shapes nvcc writes: a grid-stride loop of two float4 loads and a float load inside an outer
// loop with a load of its own; a second kernel whose two double loads are in no loop.
const char* const kPtx = R"(
.version 8.8
.target sm_90
	// .globl	_Z4sum2PKfiPf
.visible .entry _Z4sum2PKfiPf(
	.param .u64 _Z4sum2PKfiPf_param_0
)
{
	.loc	1 10 3
	ld.param.u64 	%rd1, [_Z4sum2PKfiPf_param_0];
	@%p1 bra 	$L__BB0_4;
$L__BB0_1:
	.loc	1 12 5
	ld.global.u32 	%r9, [%rd4];
$L__BB0_2:
	.loc	1 14 7
	ld.global.nc.v4.f32 	{%f1, %f2, %f3, %f4}, [%rd2];
	add.f32 	%f5, %f5, %f1;
	ld.global.nc.v4.f32 	{%f6, %f7, %f8, %f9}, [%rd3];
	.loc	2 3 1, function_name $L__info_string0, inlined_at 1 15 7
	ld.global.f32 	%f10, [%rd5];
	setp.lt.s32 	%p2, %r1, %r2;
	@%p2 bra 	$L__BB0_2;
	@%p3 bra.uni 	$L__BB0_1;
$L__BB0_4:
	st.global.f32 	[%rd6], %f5;
	ret;
}
.visible .entry _Z3twoPKdPd(
	.param .u64 _Z3twoPKdPd_param_0
)
{
	.loc	1 30 3
	ld.global.f64 	%fd1, [%rd1];
	ld.global.nc.f64 	%fd2, [%rd2];
	add.f64 	%fd3, %fd1, %fd2;
	@%p1 bra 	$L__BB1_2;
	st.global.f64 	[%rd3], %fd3;
$L__BB1_2:
	ret;
}
	.file	1 "/home/student/lab/sum.cu"
	.file	2 "/work/common/include/helpers.hpp"
)";

TEST(PtxLoads, EachLoadIsInTheInnermostLoopAroundItWithItsSourceLine) {
  const std::vector<pm::PtxLoads> k = pm::ptx_loads(kPtx);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].kernel, "_Z4sum2PKfiPf");
  ASSERT_EQ(k[0].groups.size(), 2u) << "the outer loop's load, and the inner loop's three";
  const pm::PtxLoadGroup& outer = k[0].groups[0];
  const pm::PtxLoadGroup& inner = k[0].groups[1];
  EXPECT_TRUE(outer.in_loop);
  EXPECT_EQ(outer.loads, 1);
  EXPECT_EQ(outer.bytes, 4);
  EXPECT_EQ(outer.lines, std::vector<std::string>{"sum.cu:12"});
  EXPECT_TRUE(inner.in_loop);
  EXPECT_EQ(inner.loads, 3) << "two float4 loads and a float load per trip";
  EXPECT_EQ(inner.bytes, 16 + 16 + 4);
  EXPECT_EQ(inner.lines, (std::vector<std::string>{"sum.cu:14", "helpers.hpp:3", "sum.cu:15"}))
      << "each line once; an inlined function's load on its own line and its caller's";
  EXPECT_EQ(inner.places, (std::vector<std::string>{"1:14:7", "2:3:1@1:15:7"}));
  EXPECT_EQ(k[1].kernel, "_Z3twoPKdPd");
  ASSERT_EQ(k[1].groups.size(), 1u);
  EXPECT_FALSE(k[1].groups[0].in_loop) << "a forward branch is no loop";
  EXPECT_EQ(k[1].groups[0].loads, 2);
  EXPECT_EQ(k[1].groups[0].bytes, 16);
  EXPECT_EQ(k[1].groups[0].lines, std::vector<std::string>{"sum.cu:30"});
}

TEST(PtxLoads, NoKernelsInAnEmptyFile) { EXPECT_TRUE(pm::ptx_loads("").empty()); }

pm::PtxLoadGroup group(long long bytes, std::vector<std::string> lines, std::vector<std::string> places) {
  pm::PtxLoadGroup g;
  g.bytes = bytes;
  g.loads = static_cast<int>(bytes / 4);
  g.in_loop = true;
  g.lines = std::move(lines);
  g.places = std::move(places);
  return g;
}

TEST(BusiestLoadGroup, IsTheLoopTheCallsLoadsCameFrom) {
  const pm::PtxLoadGroup narrow = group(4, {"r.cu:41"}, {"1:41:5"});
  const pm::PtxLoadGroup dead = group(128, {"r.cu:46"}, {"1:46:9"});
  long long weight = 0;
  EXPECT_EQ(pm::busiest_load_group({&dead, &narrow}, {{"r.cu:41", 1000}}, weight), &narrow)
      << "a loop no load came from lends no bytes, however wide";
  EXPECT_EQ(weight, 1000);
  EXPECT_EQ(pm::busiest_load_group({&dead, &narrow}, {{"r.cu:41", 10}, {"r.cu:46", 1000}}, weight), &dead);
  EXPECT_EQ(pm::busiest_load_group({&dead, &narrow}, {{"other.cu:41", 10}}, weight), nullptr);
}

TEST(BusiestLoadGroup, OneSourceLoopCountsItsUnrolledBodyTwoLoopsOnALineTheNarrower) {
  // nvcc's four-times unrolled body and its remainder: the same places, equal weights.
  const pm::PtxLoadGroup body = group(16, {"r.cu:41"}, {"1:41:5"});
  const pm::PtxLoadGroup rest = group(4, {"r.cu:41"}, {"1:41:5"});
  long long weight = 0;
  EXPECT_EQ(pm::busiest_load_group({&rest, &body}, {{"r.cu:41", 500}}, weight), &body);
  // A helper's load inlined into two loops (other call sites): equal weights, the narrower.
  const pm::PtxLoadGroup real = group(4, {"h.hpp:3"}, {"2:3:1@1:41:5"});
  const pm::PtxLoadGroup other = group(64, {"h.hpp:3"}, {"2:3:1@1:50:7"});
  EXPECT_EQ(pm::busiest_load_group({&other, &real}, {{"h.hpp:3", 500}}, weight), &real);
}

TEST(BusiestLoadGroup, AHelpersLoadInALoopAndInNoLoopCountsTheLoopOnlyWhereTheCountsNeedIt) {
  // One helper's load inlined into a float4 loop and into the scalar tail after it: the emulator
  // counts both at the helper's line, so the weights tie.
  const pm::PtxLoadGroup loop = group(64, {"h.cu:3", "h.cu:40"}, {"1:3:1@1:40:5"});
  pm::PtxLoadGroup tail = group(4, {"h.cu:3", "h.cu:76"}, {"1:3:1@1:76:2"});
  tail.in_loop = false;
  long long weight = 0;
  // 32,769 requests from 4,224 warps: the tail's one load per warp cannot have issued them.
  EXPECT_EQ(pm::busiest_load_group({&tail, &loop}, {{"h.cu:3", 32769}}, weight, 4224), &loop);
  EXPECT_EQ(pm::busiest_load_group({&loop, &tail}, {{"h.cu:3", 32769}}, weight, 4224), &loop);
  // As many requests as warps: the loads in no loop explain them all, and a loop that may never
  // have run lends no bytes (a dead float4 loop through the same helper).
  EXPECT_EQ(pm::busiest_load_group({&tail, &loop}, {{"h.cu:3", 4224}}, weight, 4224), &tail);
  EXPECT_EQ(pm::busiest_load_group({&loop, &tail}, {{"h.cu:3", 4224}}, weight, 4224), &tail);
  // Without the call's warps, as before: the narrower.
  EXPECT_EQ(pm::busiest_load_group({&loop, &tail}, {{"h.cu:3", 32769}}, weight), &tail);
}

TEST(ReadBandwidth, IsTheH200sMeasurementsBetweenAndLittlesLawBelow) {
  const pm::Gpu& h200 = *pm::gpu("H200");
  // Grid points: inflight.tsv (4 B x 1 load at 2048 threads per SM; 4 float4 loads at 1024).
  EXPECT_DOUBLE_EQ(pm::read_bytes_per_s(h200, 4, 2048), 2585.5e9);
  EXPECT_DOUBLE_EQ(pm::read_bytes_per_s(h200, 64, 1024), 4433.1e9);
  // Between grid points: between its neighbours, and more of either never reads slower.
  const double mid = pm::read_bytes_per_s(h200, 6, 1500);
  EXPECT_GT(mid, pm::read_bytes_per_s(h200, 4, 1024));
  EXPECT_LT(mid, pm::read_bytes_per_s(h200, 8, 2048));
  for (double bytes : {2.0, 4.0, 12.0, 64.0, 256.0})
    for (double threads : {100.0, 256.0, 700.0, 2048.0}) {
      EXPECT_LE(pm::read_bytes_per_s(h200, bytes, threads), pm::read_bytes_per_s(h200, bytes * 2, threads));
      EXPECT_LE(pm::read_bytes_per_s(h200, bytes, threads), pm::read_bytes_per_s(h200, bytes, threads * 1.5));
    }
  // Below the grid, Little's law: half the bytes in flight, half the bandwidth; above, the top row.
  EXPECT_DOUBLE_EQ(pm::read_bytes_per_s(h200, 2, 2048), pm::read_bytes_per_s(h200, 4, 2048) / 2);
  EXPECT_DOUBLE_EQ(pm::read_bytes_per_s(h200, 4, 128), pm::read_bytes_per_s(h200, 4, 256) / 2);
  EXPECT_DOUBLE_EQ(pm::read_bytes_per_s(h200, 512, 2048), pm::read_bytes_per_s(h200, 64, 2048));
  pm::Gpu other = h200;
  other.name = "not measured";
  EXPECT_EQ(pm::read_bytes_per_s(other, 64, 2048), 0) << "no measurements, no prediction";
}

}  // namespace

namespace {
/// The counts of one warp-wide pass over n elements that loads and stores 16 bytes per lane, the
/// stores `store_stride` bytes apart (the loads coalesced), as the emulator counts them per request.
pm::Counts stream_of_float4(double n, int store_stride) {
  const double requests = n / 32, span = 32.0 * store_stride;
  pm::Counts c;
  c["total"] = 2 * n;
  c["load"] = c["store"] = n;
  c["global_load_requests"] = c["global_store_requests"] = requests;
  c["global_load_sectors"] = requests * 16;
  c["global_load_lines"] = requests * 4;
  c["global_store_sectors"] = requests * (store_stride >= 32 ? 32 : span / 32);
  c["global_store_lines"] = requests * (store_stride >= 128 ? 32 : span / 128);
  return c;
}
}  // namespace

TEST(Roofline, StridedStoresAreBoundByTheL2CoalescedOnesByTheDram) {
  const pm::Gpu& h200 = *pm::gpu("H200");
  const double n = 1 << 20, bytes = 32 * n;  // 16 read + 16 written per element, every granule whole
  const pm::Prediction dense = pm::predict_roofline(stream_of_float4(n, 16), bytes, h200);
  EXPECT_EQ(dense.bound, "dram");
  EXPECT_DOUBLE_EQ(dense.seconds, bytes / h200.copy_bytes_per_s);
  // A 64-byte stride (lab 02's AoS side): 32 sectors in 16 lines per request; the H200 ran such
  // stores at 0.70-0.71 of copy (lab 02's particle_step over AoS, particles_from_layout).
  const pm::Prediction strided = pm::predict_roofline(stream_of_float4(n, 64), bytes, h200);
  EXPECT_EQ(strided.bound, "l2");
  const double fraction = bytes / h200.copy_bytes_per_s / strided.seconds;
  EXPECT_GT(fraction, 0.6);
  EXPECT_LT(fraction, 0.75);
  // A 32-byte stride (the hot/cold split's step: two stores fill each sector): 8 lines per request,
  // under the DRAM's time (the H200: 0.88 of copy).
  EXPECT_EQ(pm::predict_roofline(stream_of_float4(n, 32), bytes, h200).bound, "dram");
  // The term is its sectors and lines at the fitted costs, and scales with the work.
  const pm::Counts c = stream_of_float4(n, 64);
  EXPECT_DOUBLE_EQ(strided.terms.at("l2"), c.at("global_store_sectors") * h200.store_sector_seconds +
                                               c.at("global_store_lines") * h200.store_line_seconds);
  EXPECT_DOUBLE_EQ(pm::predict_roofline(c, bytes, h200, 4).terms.at("l2"), 4 * strided.terms.at("l2"));
}

// The parameter sets: the H200's (validated) and two from public specifications only.
TEST(Gpus, EveryNamedSetIsFoundAndOnlyTheH200IsMeasured) {
  ASSERT_EQ(pm::gpu_names().front(), "H200");
  for (const std::string& name : pm::gpu_names()) {
    const pm::Gpu* g = pm::gpu(name);
    ASSERT_NE(g, nullptr) << name;
    EXPECT_EQ(g->name, name);
    EXPECT_EQ(g->measured, name == "H200") << name;
    EXPECT_GT(g->copy_bytes_per_s, 0) << name;
    EXPECT_LE(g->copy_bytes_per_s, g->dram_bytes_per_s) << name;
  }
  EXPECT_EQ(pm::gpu("A100"), nullptr);
  EXPECT_EQ(pm::gpu("MI300X")->warp, 64);
}

// A grade predicts only for a GPU measured on: the others are refused, with the reason.
TEST(Gpus, GradesPredictOnlyForAMeasuredGpu) {
  std::string why;
  EXPECT_EQ(pm::grading_gpu("H200", why), pm::gpu("H200"));
  EXPECT_EQ(pm::grading_gpu("MI300X", why), nullptr);
  EXPECT_NE(why.find("public specifications only"), std::string::npos) << why;
  EXPECT_EQ(pm::grading_gpu("A100", why), nullptr);
  EXPECT_NE(why.find("no parameters for a GPU named 'A100'"), std::string::npos) << why;
}

// Compute capability 8.9's limits (48 warps, 24 blocks, 64 K registers in units of 256 per warp,
// 100 KB of shared memory and 1 KB reserved per block), as the CUDA occupancy calculator applies them.
TEST(Occupancy, Rtx4090FollowsComputeCapability89sLimits) {
  const pm::Gpu& g = *pm::gpu("RTX4090");
  std::string limit;
  EXPECT_EQ(pm::occupancy(g, 128, 32, 0, limit), 12);  // 4 warps a block: 48 / 4
  EXPECT_EQ(limit, "warps");
  EXPECT_EQ(pm::occupancy(g, 256, 64, 0, limit), 4);  // 64 x 32 x 8 = 16 K registers a block
  EXPECT_EQ(limit, "registers");
  EXPECT_EQ(pm::occupancy(g, 32, 16, 0, limit), 24);
  EXPECT_EQ(limit, "blocks");
  EXPECT_EQ(pm::occupancy(g, 256, 32, 32 * 1024, limit), 3);  // 100 KB / 33 KB
  EXPECT_EQ(limit, "shared memory");
  // The H200 holds more of the same block: 228 KB / 33 KB.
  EXPECT_EQ(pm::occupancy(*pm::gpu("H200"), 256, 32, 32 * 1024, limit), 6);
}

// CDNA 3: wave64; a wave's registers come from one of 4 SIMDs (512 per lane, allocated by 8); at
// most 8 waves per SIMD; 16 blocks of several waves per CU (a one-wave block needs no barrier);
// 64 KB of LDS. The first case is lab 06's step 04 as hipcc compiles it for gfx940 (98 VGPRs,
// 4 KB of LDS, 512 threads), for which the compiler reports 4 waves per SIMD: 2 blocks of 8 waves.
TEST(Occupancy, Mi300xCountsWavesPerSimd) {
  const pm::Gpu& g = *pm::gpu("MI300X");
  std::string limit;
  EXPECT_EQ(pm::occupancy(g, 512, 98, 4096, limit), 2);
  EXPECT_EQ(limit, "registers");
  EXPECT_EQ(pm::occupancy(g, 1024, 10, 0, limit), 2);  // 16 waves a block, 32 a CU
  EXPECT_EQ(limit, "warps");
  // 2 waves a block: 16 by the waves and 16 by the barriers; one wave: no barrier, 8 per SIMD.
  EXPECT_EQ(pm::occupancy(g, 128, 24, 0, limit), 16);
  EXPECT_EQ(pm::occupancy(g, 64, 24, 0, limit), 32);
  EXPECT_EQ(limit, "warps");
  EXPECT_EQ(pm::occupancy(g, 128, 128, 8448, limit), 7);  // 8 by registers, 7 by LDS
  EXPECT_EQ(limit, "shared memory");
  // 100 registers are allocated as 104: 4 waves on a SIMD, not 5 (512 / 100).
  EXPECT_EQ(pm::occupancy(g, 256, 100, 0, limit), 4);
  EXPECT_EQ(pm::occupancy(g, 256, 96, 0, limit), 5);
  // Registers are a SIMD's, not the CU's pool: 4 waves of 104 on each SIMD, 16 in all, hold 5
  // blocks of 3 waves (a pool of 4 x 512 / 104 = 19.7 waves would say 6).
  EXPECT_EQ(pm::occupancy(g, 192, 100, 0, limit), 5);
  EXPECT_EQ(limit, "registers");
}

// A 64-wide wave's instruction issues once for 64 threads; the emulator counts its memory requests
// per 32 lanes, so two counted requests are one instruction.
TEST(Roofline, AWaveOf64IssuesOneInstructionForTwoCountedRequests) {
  const pm::Gpu& mi = *pm::gpu("MI300X");
  const pm::Counts counts{{"total", 64.0 * 1000}, {"global_load_requests", 2.0 * 500}};
  const pm::Prediction p = pm::predict_roofline(counts, 0, mi);
  EXPECT_DOUBLE_EQ(p.terms.at("issue"), (1000.0 + 500.0) / (mi.clock_hz * mi.sms * mi.schedulers));
  const pm::Gpu& h = *pm::gpu("H200");
  const pm::Prediction q = pm::predict_roofline(counts, 0, h);
  EXPECT_DOUBLE_EQ(q.terms.at("issue"), (2000.0 + 1000.0) / (h.clock_hz * h.sms * h.schedulers));
}

TEST(GraderCeilings, ThePredictionsOfEveryGradeStayBelowTheGpusPeaks) {
  const pm::Gpu& h200 = *pm::gpu("H200");
  // 132 SMs x 128 FP32 lanes x 2 FLOP x 1.98 GHz
  EXPECT_NEAR(pm::fp32_peak_flops(h200), 66.9e12, 0.1e12);
  EXPECT_EQ(pm::beyond_ceiling(h200, 0, 0), "");
  // cuBLAS's measured 51.4 TFLOP/s and the DRAM's 4.8 TB/s are within them; the reference
  // reduction's predicted 4.45 TB/s (1.04 of CUB's 4.28) too.
  EXPECT_EQ(pm::beyond_ceiling(h200, 51.39e12, 0), "");
  EXPECT_EQ(pm::beyond_ceiling(h200, 0, 4.45e12), "");
  // The host's work laundered through a decoy kernel: 581 TFLOP/s predicted ("11.3 of cuBLAS").
  const std::string flops = pm::beyond_ceiling(h200, 581e12, 0);
  EXPECT_NE(flops.find("8.68 times the FP32 peak of an H200 (66.9 TFLOP/s"), std::string::npos) << flops;
  // A copy fraction of 1.3 on the H200's measured copy bandwidth: more than its DRAM moves.
  const std::string bytes = pm::beyond_ceiling(h200, 0, 1.3 * h200.copy_bytes_per_s);
  EXPECT_NE(bytes.find("1.05 times the DRAM bandwidth of an H200 (4.8 TB/s)"), std::string::npos) << bytes;
}

// The physical floor of a timed call (kit::TimedCall): an H200 by its datasheet whatever its
// properties say, the larger of the two where the properties are higher, twice the properties for
// a GPU the table lacks, and writes the L2 can hold not counted.
TEST(PhysicalFloor, AnH200ReadsAtMost4p8TBPerSecondAndComputes66p9TFlops) {
  // The H200's reported properties: 3201 MHz memory clock, 6144-bit bus, 132 SMs at 1980 MHz.
  const pm::PeakRates h200 = pm::peak_rates("NVIDIA H200", 3.201e9, 6144, 132, 1.98e9, 60e6);
  EXPECT_NEAR(h200.dram_bytes_per_s, 2 * 3.201e9 * 768, 1);  // the properties' 4.92 TB/s beat the datasheet's 4.8
  EXPECT_NEAR(h200.fp32_flops, 132 * 128 * 2 * 1.98e9, 1e6);
  const pm::PeakRates bare = pm::peak_rates("NVIDIA H200", 0, 0, 0, 0, 60e6);
  EXPECT_DOUBLE_EQ(bare.dram_bytes_per_s, 4.8e12);
  std::string why;
  // Lab 01 at n = 16384: a GiB of matrix read at 4.8 TB/s (the reference takes 0.26 ms on an H200).
  const double gib = 1024.0 * 1024 * 1024;
  EXPECT_NEAR(pm::physical_floor_ms({gib, 65536, 0}, bare, why), gib / 4.8e12 * 1e3, 1e-9);
  EXPECT_NE(why.find("4.8 TB/s"), std::string::npos) << why;
  // Lab 06 at 4096^3: the FLOPs decide (cuBLAS takes 2.68 ms).
  const double n = 4096;
  EXPECT_NEAR(pm::physical_floor_ms({8 * n * n, 4 * n * n, 2 * n * n * n}, bare, why), 2 * n * n * n / bare.fp32_flops * 1e3,
              1e-9);
  EXPECT_LT(pm::physical_floor_ms({8 * n * n, 4 * n * n, 2 * n * n * n}, bare, why), 2.68);
  // Writes up to the L2's size may still sit in it when the run ends: only the rest counts.
  EXPECT_NEAR(pm::physical_floor_ms({0, 100e6, 0}, bare, why), (100e6 - 60e6) / 4.8e12 * 1e3, 1e-12);
}

TEST(PhysicalFloor, AnUnknownGpuGetsTwiceItsProperties) {
  const pm::PeakRates p = pm::peak_rates("Some Future GPU", 1e9, 1024, 10, 1e9, 1e6);
  EXPECT_DOUBLE_EQ(p.dram_bytes_per_s, 2 * (2 * 1e9 * 128));
  EXPECT_DOUBLE_EQ(p.fp32_flops, 2 * (10 * 128 * 2 * 1e9));
  std::string why;
  EXPECT_EQ(pm::physical_floor_ms({1e9, 0, 0}, pm::PeakRates{}, why), 0);
  EXPECT_NE(why.find("not known"), std::string::npos);
}
