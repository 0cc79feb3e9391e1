#!/usr/bin/env bash
# Runs phases of the GPU machine's checks one after another, so that one lease can run longer than a
# single device call: start it detached, collect DIR (a tarball) in later calls.
#   setsid nohup bash docs/results/gpu-queue.sh /tmp/gl build probe04 verdicts:02,03 ... > /dev/null 2>&1 &
# The queue first copies the repository (without build/) to DIR/src and runs there, so that later
# device calls, which refresh the working tree, cannot change the files under a running phase; a
# second queue started meanwhile (another DIR, e.g. with changed sources) waits for the first
# (/tmp/gpulab-queue.lock) and so never shares the GPU with it.
# Each phase logs to DIR/PHASE/; DIR/progress gets a line per start and end (exit status, seconds).
# A polling call (each under the device's 10-minute limit, issued as soon as the last returns, so
# the machine stays held) sleeps, prints DIR/progress and packs the logs into $OUT:
#   sleep 540; cat /tmp/gl/progress; tar czf $OUT/gl.tgz --exclude=src --exclude='*/bin' -C /tmp gl
# Times seen on the H200 (2026-11-30): build 35-40 s, lab04 797 s, lab05 126 s, class 394 s, a lab 04
# verdict test ~70 s (before the GPU grade ran its portability check and the four sanitizer tools
# alongside the rest; each report now has the seconds per phase); later: verdicts:02,03,05 455 s
# for 38 hand-ins (a lab 03 grade's own run ~17 s, lab 04's ~34 s: its 2^28 inputs), calibrate02
# 74 s, calibrate03 102 s, ncu02 79 s, probes 10-40 s each. 2026-12-01: build 47-52 s, a grade:03 41 s,
# a grade:04 59 s, probe05:8388608 20 s, calibrate03 123 s, verdicts:03 306 s (13 cases), ncu03 60 s,
# verdicts:02 242 s (12), verdicts:06 55 s (10), verdicts:04 8 of 16 cases in ~500 s (each lab 04 grade
# spent ~40 s in its runner and ~27 s in its judge, mostly host work on 2^28-float inputs, made
# cheaper the same day: docs/results/lab04-h200.md). Keep polls back to back: the machine is released
# after 30 s without a call, and a queue's results go with it.
# Phases:
#   build                 the cuda preset, every target
#   lab04 | lab05         docs/results/lab04-gpu.sh | h200-lab05.sh without their verdict suites
#   class                 docs/results/class-gpu.sh (10 lab 01 hand-ins as a class and alone)
#   verdicts:NN,MM,...    the verdict suites of those labs on cuda, as 4 shards at once (compiles
#                         overlap; the GPU lock keeps timed runs apart); every report is kept in
#                         DIR/PHASE/reports (GPULAB_VERDICT_REPORTS); the hand-ins' runners stay in
#                         build/cuda/handins (GPULAB_KEEP_HANDINS) for ncu03
#   gtest:BINARY:FILTER   a test executable of build/cuda/grader/tests (e.g.
#                         gtest:grader_record_tests:GraderRecord.* or
#                         gtest:grader_idiom_tests:*/01_struct_parameters), its output in the phase's log
#   grade:NN:FILE         ./gpulab grade NN --submission FILE (report.txt, report.json); the phase's
#                         directory is DIR/grade:NN:FILE with the file's slashes
#   tune06:N              lab 06's tile search (sgemm_tune) at N^3 against cuBLAS, raster 8
#   ladder06:N,M,...      lab 06's sgemm_steps_test (every step and reference variant on awkward sizes),
#                         then its ladder, steps 09 and 10 (the reference), at those sizes cubed against
#                         cuBLAS, three runs in a row (DIR/PHASE/steps_test.txt, runN.txt)
#   corpus                common/emu/tests/cuda-corpus on the GPU (the programs the cuda build made; the
#                         VERSION lines in DIR/corpus/versions.txt, a table in summary.md)
#   idioms[:NN/FILE,...]  grader/tests/idioms/run-gpu.sh on cuda: every idiom (or those named, e.g.
#                         idioms:06-sgemm/pipeline_async_copies.cu) graded, one verdict line each
#   calibrateNN           ./gpulab calibrate NN (the reference, 3 runs: ratios, and "passes three
#                         runs in a row")
#   ncu02 | ncu03         Nsight Compute on lab 02's AoS/SoA kernels | lab 03's transpose steps
#   ncu05                 Nsight Compute on lab 05's reorder: the reference's gather, the scatter hand-in
#   cases:NN:A,B,...      only those hand-ins of lab NN's verdict suite (names as in the test list,
#                         e.g. cases:04:skips_tail,solution), as verdicts:NN does
#   ncu06                 lab 06's ladder at 4096^3 under Nsight Compute (instructions, wavefronts,
#                         sectors, registers, occupancy: the performance model's validation)
#   ncuval                common/emu/validation/ncu.sh: the emulator-metrics validation kernels (among them
#                         the shared-memory width patterns) under Nsight Compute; DIR/ncuval/labels.txt
#                         names the launches (compare.py --labels)
#   inflight              docs/results/perfmodel/probes/inflight.cu: DRAM bandwidth against bytes in flight
#                         per SM (loads per thread per trip x width x threads per SM)
#   granule               docs/results/perfmodel/probes/granule.cu: DRAM bytes per strided 16-byte read
#                         (the L2's fetch granule), timed and under Nsight Compute
#   stores                docs/results/perfmodel/probes/stores.cu: strided stores (W bytes per lane, S apart)
#                         against a copy, timed and under Nsight Compute (L2 write sectors, DRAM bytes)
#   latency               docs/results/perfmodel/probes/latency.cu: load latency by pointer chasing (L1,
#                         L2, DRAM), the performance model's latency parameter
#   ncu04                 lab 04's reference, CUB's kernels and the copy kernel under Nsight Compute
#                         (grid, registers, time, DRAM bytes) as the grader's speed check runs them
#   ncu05i                lab 05's density kernels: ncu's instruction/warp-state/occupancy sections and
#                         the reference's SASS (DIR/ncu05i/density.sass)
#   probe02|probe03|probe04  docs/results/probes/{aos_soa,transpose,reduce}_variants.cu
#   probe03s              docs/results/probes/transpose_shapes.cu: lab 03's reference against a copy of the same
#                         misaligned rows (6151 x 4987), and the doubles' steps three rounds each
#   probe06p              docs/results/probes/sgemm_pipeline.cu: lab 06's SGEMM as a cp.async pipeline (2-4
#                         stages, transposed A tile, fragment double buffering), tile variants against
#                         cuBLAS at 2048^3, 4096^3 and 4000^3, three rounds (links cuBLAS; ptxas -v in build.log)
#   probe05:N             docs/results/probes/lab05_probes.cu at N particles (e.g. 8388608: the state
#                         beyond the L2, where the indirection's scattered reads come from DRAM)
set -uo pipefail
dir="$1"; shift
mkdir -p "$dir"
export GPULAB_NO_INSTALL=1
repo="$(pwd)"
exec 9> /tmp/gpulab-queue.lock
echo "$(date +%T) waiting for the queue lock" >> "$dir/progress"
flock 9
mkdir -p "$dir/src"
tar -C "$repo" --exclude=./build --exclude=./out -cf - . | tar -C "$dir/src" -xf -
cd "$dir/src" || exit 2
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$dir/gpu.csv" 2>&1

probe() {  # probe NAME SOURCE [NVCC_ARGS...]: build and run a probe, TSV out (extra args, e.g. -lcublas, go to nvcc)
  local name="$1" src="$2"; shift 2
  mkdir -p "$dir/$name/bin"
  nvcc -O3 -std=c++17 -arch=sm_90 "$src" "$@" -o "$dir/$name/bin/probe" > "$dir/$name/build.log" 2>&1 &&
    timeout 300 "$dir/$name/bin/probe" > "$dir/$name/$(basename "$src" .cu).tsv" 2>&1
}

verdicts() {  # verdicts PHASE LABS(comma-separated) | verdicts PHASE "" GTEST_FILTER
  local phase="$1" filter="${3:-}" lab pids=() s rc=0
  for lab in ${2//,/ }; do filter+="${filter:+:}*/${lab}_*"; done
  for s in 0 1 2 3; do
    GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$s GPULAB_VERDICT_REPORTS="$dir/$phase/reports" GPULAB_KEEP_HANDINS=1 \
      build/cuda/grader/tests/grader_verdict_tests --gtest_filter="$filter" > "$dir/$phase/shard$s.log" 2>&1 &
    pids+=($!)
  done
  for s in "${pids[@]}"; do wait "$s" || rc=1; done
  grep -hE "^\[ +(OK|FAILED|SKIPPED) +\]" "$dir/$phase"/shard*.log | sort -k4 > "$dir/$phase/summary.txt"
  return $rc
}

ncu_metrics_02=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,gpu__time_duration.sum
ncu_metrics_03=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_inst_executed_op_shared_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,dram__bytes.sum,gpu__time_duration.sum

for phase in "$@"; do
  mkdir -p "$dir/$phase"
  t0=$(date +%s)
  echo "$(date +%T) start $phase" >> "$dir/progress"
  case "$phase" in
    build)  # the cuda preset, and the emulator tree of the portability check (no clang here: g++)
      { nvidia-smi; cmake --preset cuda && cmake --build build/cuda -j "$(nproc)" &&
          cmake --preset emu-gcc && cmake --build build/emu-gcc -j "$(nproc)" --target gpulab-grade; } > "$dir/build/build.log" 2>&1 ;;
    lab04) GPULAB_VERDICTS=0 OUT="$dir/lab04" bash docs/results/lab04-gpu.sh > "$dir/lab04/summary.txt" 2>&1 ;;
    lab05) GPULAB_VERDICTS=0 OUT="$dir/lab05" bash docs/results/lab05-gpu.sh > "$dir/lab05/summary.txt" 2>&1 ;;
    class) GPULAB_BACKEND=cuda bash docs/results/class-gpu.sh "$dir/class/run" 4 > "$dir/class/summary.txt" 2>&1 ;;
    verdicts:*) verdicts "$phase" "${phase#verdicts:}" ;;
    cases:*)  # cases:NN:NAME,NAME,...: those hand-ins of lab NN's verdict suite only (4 shards)
      spec="${phase#cases:}"; lab="${spec%%:*}"; f=""
      for c in $(tr , ' ' <<< "${spec#*:}"); do f+="${f:+:}*/${lab}_*_${c}"; done
      verdicts "$phase" "" "$f" ;;
    gtest:*)  # gtest:BINARY:FILTER
      spec="${phase#gtest:}"
      "build/cuda/grader/tests/${spec%%:*}" --gtest_filter="${spec#*:}" > "$dir/$phase/test.log" 2>&1 ;;
    tune06:*)  # tune06:N: lab 06's tile search at N^3 (solutions/06-sgemm/bench/sgemm_tune.cu)
      build/cuda/solutions/06-sgemm/sgemm_tune --n "${phase#tune06:}" --rasters 8 > "$dir/$phase/tune.txt" 2>&1 ;;
    ladder06:*)  # ladder06:2048,4000,4096: correctness, then steps 09-10 against cuBLAS, three runs
      build/cuda/solutions/06-sgemm/sgemm_steps_test > "$dir/$phase/steps_test.txt" 2>&1 &&
      for run in 1 2 3; do
        build/cuda/solutions/06-sgemm/sgemm_ladder --steps 9,10 --sizes "${phase#ladder06:}" \
          > "$dir/$phase/run$run.txt" 2>&1 || break
      done ;;
    corpus) bash common/emu/tests/cuda-corpus/corpus-run.sh build/cuda "$dir/corpus" > "$dir/corpus/run.log" 2>&1 ;;
    idioms|idioms:*)  # every idiom, or idioms:LAB/FILE,LAB/FILE (paths under grader/tests/idioms)
      files=()
      [[ $phase == idioms:* ]] && for f in $(tr , ' ' <<< "${phase#idioms:}"); do files+=("grader/tests/idioms/$f"); done
      bash grader/tests/idioms/run-gpu.sh "$dir/$phase/reports" cuda "${files[@]}" > "$dir/$phase/verdicts.txt" 2>&1 ;;
    calibrate0[0-9]) ./gpulab calibrate "${phase#calibrate}" > "$dir/$phase/calibrate.txt" 2>&1 ;;
    grade:*)  # grade:LAB:FILE, e.g. grade:03:solutions/03-bank-conflicts/steps/04_swizzled.cu
      spec="${phase#grade:}"; lab="${spec%%:*}"; file="${spec#*:}"; mkdir -p "$dir/$phase"
      ./gpulab grade "$lab" --submission "$file" --json "$dir/$phase/report.json" > "$dir/$phase/report.txt" 2>&1 ;;
    ncu02)
      # Each kernel of the pipeline on its own (the grader's AoS baseline, lab02_distances_aos, is left out).
      for impl in stub solution; do
        for k in distances step convert; do
          case $k in distances) re='^distances' ;; step) re='^step' ;; convert) re='^(aos_to|soa_to|copy_float4)' ;; esac
          timeout 240 ncu --metrics "$ncu_metrics_02" --kernel-name regex:"$re" --launch-count 2 --csv \
            build/cuda/grader/labs/02-aos-soa/lab-02-aos-soa-$impl --rubric grader/labs/02-aos-soa/rubric.ini \
            --gtest_filter='performance.*' > "$dir/ncu02/ncu-$impl-$k.csv" 2> "$dir/ncu02/ncu-$impl-$k.log"
        done
      done ;;
    ncu03)
      # The runners the verdict phase kept (GPULAB_KEEP_HANDINS), found by their source; the reference's own.
      subs=grader/tests/submissions/03-bank-conflicts
      for f in "$subs/stub/transpose.cu" "$subs/unpadded_tile.cu" "$subs/swizzled.cu" solution; do
        name="$(basename "$f" .cu)"; runner=""
        if [[ "$f" == solution ]]; then runner=build/cuda/grader/labs/03-bank-conflicts/lab-03-bank-conflicts-solution
        else
          for d in build/cuda/handins/03-bank-conflicts-submission-*; do
            # the staged source starts with #line 1 "<the hand-in's absolute path>"
            head -1 "$d/src/transpose.cu" | grep -qF "\"$(realpath "$f")\"" && [[ -x "$d/runner" ]] && { runner="$d/runner"; break; }
          done
        fi
        [[ -n "$runner" ]] || { echo "$name: no runner kept" >> "$dir/ncu03/missing"; continue; }
        timeout 240 ncu --metrics "$ncu_metrics_03" --kernel-name regex:'transpose|tiled' --launch-count 2 --csv "$runner" \
          --rubric grader/labs/03-bank-conflicts/rubric.ini --gtest_filter='performance.bandwidth_vs_copy' \
          > "$dir/ncu03/ncu-$name.csv" 2> "$dir/ncu03/ncu-$name.log"
      done ;;
    ncu05)
      # The reorder as the hardware counts it: the reference's gather and the scatter hand-in (its
      # runner kept by a verdicts phase that ran lab 05), DRAM bytes and L1 sectors per request.
      m=dram__bytes_read.sum,dram__bytes_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,gpu__time_duration.sum
      f=grader/tests/submissions/05-particle-reorder/scatter_reorder.cu; runner=""
      for d in build/cuda/handins/05-particle-reorder-submission-*; do
        head -1 "$d/src/particle_reorder.cu" 2>/dev/null | grep -qF "\"$(realpath "$f")\"" && [[ -x "$d/runner" ]] && { runner="$d/runner"; break; }
      done
      for r in build/cuda/grader/labs/05-particle-reorder/lab-05-particle-reorder-solution "$runner"; do
        [[ -x "$r" ]] || { echo "no runner: $r" >> "$dir/ncu05/missing"; continue; }
        name=$([[ "$r" == *solution ]] && echo solution || echo scatter_reorder)
        timeout 240 ncu --metrics "$m" --kernel-name regex:'gather' --launch-count 2 --csv "$r" \
          --rubric grader/labs/05-particle-reorder/rubric.ini --gtest_filter='performance.reorder_bandwidth_vs_copy' \
          > "$dir/ncu05/ncu-$name.csv" 2> "$dir/ncu05/ncu-$name.log"
      done ;;
    ncu06)
      # The SGEMM ladder at 4096^3, every step once (its check, a warm-up, one timed run: 3
      # launches each), under Nsight Compute: the SASS instructions, shared wavefronts, global
      # sectors, registers and occupancy that the performance model (common/emu/passes) predicts
      # from the emulator's counts. cuBLAS and the helper kernels are not profiled.
      k='regex:(naive|coalesced|smem_tiling|register_1d|register_2d|float4_loads|transposed_a|double_buffer|warp_tiling)_kernel|sgemm_tiled'
      r=build/cuda/solutions/06-sgemm/sgemm_ladder
      timeout 280 ncu --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats \
        --section InstructionStats --metrics smsp__inst_executed.sum,smsp__sass_thread_inst_executed.sum,gpu__time_duration.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_inst_executed_op_shared_ld.sum,lts__t_sectors_op_read.sum,dram__bytes_read.sum \
        -k "$k" -c 60 --csv --page details "$r" --sizes 4096 --min-runs 1 --max-runs 1 --budget-ms 1 \
        > "$dir/ncu06/ncu-ladder.csv" 2> "$dir/ncu06/ncu-ladder.log"
      timeout 120 ncu --metrics smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__issue_active.avg.pct_of_peak_sustained_active \
        -k "$k" -c 60 --csv "$r" --sizes 4096 --min-runs 1 --max-runs 1 --budget-ms 1 \
        > "$dir/ncu06/ncu-ladder-more.csv" 2> "$dir/ncu06/ncu-ladder-more.log" ;;
    latency) probe latency docs/results/perfmodel/probes/latency.cu ;;
    stores)
      probe stores docs/results/perfmodel/probes/stores.cu
      PROBE_ONCE=1 timeout 280 ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum \
        -k write_records --csv "$dir/stores/bin/probe" > "$dir/stores/ncu-stores.csv" 2> "$dir/stores/ncu-stores.log" ;;
    inflight) probe inflight docs/results/perfmodel/probes/inflight.cu ;;
    granule)
      probe granule docs/results/perfmodel/probes/granule.cu
      timeout 120 ncu --metrics dram__bytes_read.sum,gpu__time_duration.sum -k read_strided --csv \
        "$dir/granule/bin/probe" > "$dir/granule/ncu-granule.csv" 2> "$dir/granule/ncu-granule.log" ;;
    ncuval)
      build/cuda/common/emu/validation/gpulab-validation-kernels > "$dir/ncuval/labels.txt" 2>&1
      timeout 280 bash common/emu/validation/ncu.sh build/cuda "$dir/ncuval/ncu.csv" 2> "$dir/ncuval/ncu.log" ;;
    ncu04)
      # Lab 04 at 2^28 as the grader times it: the reference's kernel, CUB's two and the copy kernel
      # (grid, registers, time, DRAM bytes), inside the reference runner's performance.speed_vs_vendor.
      r=build/cuda/grader/labs/04-reductions/lab-04-reductions-solution
      timeout 300 ncu --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed \
        --kernel-name regex:'Reduce|reduce_|copy' --launch-count 40 --csv "$r" \
        --rubric grader/labs/04-reductions/rubric.ini --gtest_filter='performance.speed_vs_vendor' \
        > "$dir/ncu04/ncu-speed.csv" 2> "$dir/ncu04/ncu-speed.log" ;;
    ncu05i)
      # Instructions behind lab 05's density kernels (the grader's through-the-index baseline and the
      # reference's reordered loop): ncu's instruction, warp-state and occupancy sections, and the
      # reference runner's SASS of its density kernel.
      r=build/cuda/grader/labs/05-particle-reorder/lab-05-particle-reorder-solution
      timeout 300 ncu --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats \
        --section WarpStateStats --section Occupancy --section MemoryWorkloadAnalysis \
        --metrics smsp__inst_executed.sum,smsp__sass_thread_inst_executed.sum,gpu__time_duration.sum \
        --kernel-name regex:'density' --launch-count 4 --csv --page details "$r" \
        --rubric grader/labs/05-particle-reorder/rubric.ini --gtest_filter='performance.density_speedup_vs_indirection' \
        > "$dir/ncu05i/ncu-density.csv" 2> "$dir/ncu05i/ncu-density.log"
      cuobjdump -sass "$r" > "$dir/ncu05i/solution.sass" 2> "$dir/ncu05i/cuobjdump.log"
      awk '/Function : .*density/{f=1} /Function : /&&!/density/{f=0} f' "$dir/ncu05i/solution.sass" > "$dir/ncu05i/density.sass"
      gzip -f "$dir/ncu05i/solution.sass" ;;
    probe02) probe probe02 docs/results/probes/aos_soa_variants.cu ;;
    probe03) probe probe03 docs/results/probes/transpose_variants.cu ;;
    probe04) probe probe04 docs/results/probes/reduce_variants.cu ;;
    probe03s) probe probe03s docs/results/probes/transpose_shapes.cu ;;
    probe06p) probe probe06p docs/results/probes/sgemm_pipeline.cu -Xptxas -v -lcublas ;;  # registers/spills in build.log
    probe05:*)  # probe05:N: lab 05's probes (docs/results/probes/lab05_probes.cu) at N particles
      mkdir -p "$dir/$phase/bin"
      nvcc -O3 -std=c++17 -arch=sm_90 -Ilabs/05-particle-reorder -Icommon/include -Igrader/common -o "$dir/$phase/bin/probe" docs/results/probes/lab05_probes.cu \
        > "$dir/$phase/build.log" 2>&1 && timeout 300 "$dir/$phase/bin/probe" "${phase#probe05:}" > "$dir/$phase/probes.tsv" 2>&1 ;;
    *) echo "unknown phase $phase" > "$dir/$phase/error"; false ;;
  esac
  status=$?  # before any command substitution below replaces $?
  echo "$(date +%T) end $phase exit $status $(( $(date +%s) - t0 )) s" >> "$dir/progress"
done
echo "$(date +%T) all done" >> "$dir/progress"
