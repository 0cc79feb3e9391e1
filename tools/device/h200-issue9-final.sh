export GPULAB_NO_INSTALL=1
t0=$(date +%s)
{ cmake --preset cuda && cmake --build build/cuda -j 16; } > $OUT/build-cuda.log 2>&1 || { tail -30 $OUT/build-cuda.log; exit 1; }
{ cmake --preset emu-gcc && cmake --build build/emu-gcc -j 16 --target gpulab-grade lab-01-coalescing-solution lab-01-coalescing-checks; } > $OUT/build-emu.log 2>&1 || { tail -30 $OUT/build-emu.log; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
build/cuda/grader/gpulab-grade grade 01 --submission grader/tests/submissions/01-coalescing/barrier_in_warp_uniform_branch.cu --json $OUT/barrier.json > $OUT/barrier.txt 2>&1 &
timeout 280 ctest --test-dir build/cuda -R "Verdict.*(barrier_in_warp|out_of_bounds_write|divergent|01_coalescing_solution|wild_pointer|off_by_one)" -j 6 --output-on-failure > $OUT/verdicts.log 2>&1
echo "verdicts: $? :: $(grep -E 'tests passed|tests failed' $OUT/verdicts.log)"; grep -E "Passed|Failed|\*\*\*" $OUT/verdicts.log | cut -c1-150
wait
python3 -c "
import json; l=json.load(open('$OUT/barrier.json'))['labs'][0]; print(l['score'], l['max_score'])
for c in l['checks']: print(' ', 'pass' if c['passed'] else 'FAIL', c['name'], c.get('value'), c['message'].splitlines()[:4] if not c['passed'] else '')"
echo "total $(( $(date +%s) - t0 )) s"
