#!/bin/bash
# Device call (2026-12-07, thirty-fourth session): sm90-v39 r3, prepared and not run (the session's device time ran out: six calls found no machine and the last was refused). The weight blocks grouped by four chunks of a row block
# (-DNVFP4_SM90_WGROUP=4, every translation unit: host and GPU prepacks and the kernel), so that a K-split stage's weight
# blocks are one bulk copy (v13 r2's copy probe: four chunks in one block-major copy 87 ns a chunk, four separate
# chunk-major copies 147; r2's trace: the weight warp ~416 ns from reaching a free slot to having issued a stage's four
# copies, the K-split's pace). a3 = HEAD 462911f's kernel; wg / wg_tests = the tree with the switch (full build);
# twg = wg's kernel with -DNVFP4_SM90_TRACE. Tiles of two or more row blocks copy each block of a chunk apart.
set -u
CAP=${1:-300}  # seconds of this call the steps may start in
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry82/a3 ] || tar -xJf build/carry82.tar.xz -C build
B=$PWD/build/carry82; R=$OUT/r3; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results3.tgz -C $OUT r3; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 60 $B/wg_tests --gtest_filter='Gpu.Sm90*' > $R/wg-tests.txt 2>&1; echo "== wg Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/wg-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/wg-tests.txt | head -6; pack
tools/sm90-ab $R/ab16 --bin a3=$B/a3 --bin wg=$B/wg --rows 16,32,8,24 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 70 > $R/ab16.txt 2>&1; echo "== ab16 rc $? [$(el) s]"
python3 tools/bench-compare $R/ab16 --base a3 > $R/ab16-compare.txt 2>&1; cat $R/ab16-compare.txt | head -12; pack
NVFP4_SM90_CONFIG=16x1x1x1x3 NVFP4_SM90_TRACE_OUT=$R/trace-twg-m16.txt timeout 30 $B/twg bench --no-quantizer --rows 16 --iters 3 --warmup 1 --backend sm90 --shapes attn_out_proj --commit twg > $R/trace-twg-m16.run.txt 2>&1
python3 tools/sm90-trace-summary $R/trace-twg-m16.txt > $R/trace-twg-m16-summary.txt 2>&1; grep -E "e2 |e8 -> e0|e0 -> e2|e4 -> e7" $R/trace-twg-m16-summary.txt | head -5; pack
tools/sm90-ab $R/abl --bin a3=$B/a3 --bin wg=$B/wg --rows 128,16,64,4096 --rounds 1 --budget $(( CAP * 2 / 5 )) > $R/abl.txt 2>&1; echo "== abl rc $? [$(el) s]"
python3 tools/bench-compare $R/abl --base a3 > $R/abl-compare.txt 2>&1; cat $R/abl-compare.txt | head -24; pack
[ $(el) -lt $(( CAP - 40 )) ] && { (cd build/h && timeout 60 $B/wg validate --candidate sm90,sm90-stream --out $R/wg-validate > $R/wg-validate.txt 2>&1); echo "== wg validate rc $? $(grep -cE 'PASS' $R/wg-validate.txt) PASS lines [$(el) s]"; tail -3 $R/wg-validate.txt; pack; }
[ $(el) -lt $(( CAP - 60 )) ] && { NVFP4_TEST_SM90_CONFIGS=16x1x1x1x3,128x2x1x1 timeout 60 compute-sanitizer --tool racecheck $B/wg_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/racecheck.txt 2>&1; echo "== wg racecheck rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/racecheck.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack; }
echo "done [$(el) s]"
