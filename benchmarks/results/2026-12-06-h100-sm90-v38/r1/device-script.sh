#!/bin/bash
# Device call (2026-12-06, thirty-third session): sm90-v38 r1. carry75 = carry74 (hd = HEAD's kernel at its defaults,
# 6faa80e's SASS; a3d / a3d_tests / ta3d = v37 r5's switch -DNVFP4_SM90_KS_A3D=1) + sr / sr_tests (the stage-warp mend:
# copy_thread without stage_warp, role inside; SASS differs from hd in 32x1x1x1x2 / x3 only, register names).
# On an H200: the README's H200 table anew first (hd). Then v37's r5 script (a3d), then hd / sr at M = 32.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry75/sr ] || tar -xJf build/carry75.tar.xz -C build
B=$PWD/build/carry75; R=$OUT/r1; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results1.tgz -C $OUT r1; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
if grep -q H200 $R/device.txt; then
  tools/sm90-ab $R/tab --bin hd=$B/hd --rows 16,128,4096,32,64 --rounds 2 --budget 260 --timeout 60 > $R/tab.txt 2>&1; echo "== tab rc $? [$(el) s]"
  python3 tools/bench-compare $R/tab --markdown hd > $R/tab-markdown.txt 2>&1; cat $R/tab-markdown.txt; pack
  for m in 16 128; do
    timeout 60 $B/hd bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream,comfy-hopper,cublas-fp8 --commit 861763f --out $R/cols-m$m.json > $R/cols-m$m.txt 2>&1; echo "== cols M=$m rc $? [$(el) s]"; pack
  done
fi
timeout 50 $B/a3d_tests --gtest_filter='Gpu.Sm90*' > $R/a3d-tests.txt 2>&1; echo "== a3d Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/a3d-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/a3d-tests.txt | head -4; pack
for m in 16 32; do timeout 40 $B/a3d validate --rows $m --linear out,fc2 --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/a3d-val-m$m.txt 2>&1; echo "== a3d validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/a3d-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
tools/sm90-ab $R/ab --bin hd=$B/hd --bin a3d=$B/a3d --rows 16,32,8 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 60 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base hd > $R/ab/compare.txt 2>&1; cat $R/ab/compare.txt; pack
NVFP4_TEST_SM90_CONFIGS=16x1x1x1x3,32x1x1x1x3 timeout 60 compute-sanitizer --tool racecheck $B/a3d_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/racecheck.txt 2>&1; echo "== racecheck rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/racecheck.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
NVFP4_SM90_TRACE_OUT=$R/trace-ta3d-m16-16x1x1x1x3.txt timeout 30 $B/ta3d bench --no-quantizer --rows 16 --iters 3 --warmup 1 --backend sm90 --sm90-config 16x1x1x1x3 --shapes attn_out_proj --commit ta3d > /dev/null 2>&1
python3 tools/sm90-trace-summary $R/trace-ta3d-m16-16x1x1x1x3.txt > $R/trace-ta3d-m16-16x1x1x1x3-summary.txt 2>&1; grep -E "ns/chunk|e8 -> e0|e0 -> e2" $R/trace-ta3d-m16-16x1x1x1x3-summary.txt | head -12; pack
[ $(el) -lt 470 ] || { echo "done, no time for sr [$(el) s]"; exit 0; }
NVFP4_TEST_SM90_CONFIGS=32x1x1x1x2,32x1x1x1x3 timeout 40 $B/sr_tests --gtest_filter='Gpu.Sm90*' > $R/sr-tests.txt 2>&1; echo "== sr Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/sr-tests.txt | tr '\n' ' ') [$(el) s]"; pack
tools/sm90-ab $R/absr --bin hd=$B/hd --bin sr=$B/sr --rows 32 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 40 > $R/absr.txt 2>&1; echo "== absr rc $? [$(el) s]"
python3 tools/bench-compare $R/absr --base hd > $R/absr/compare.txt 2>&1; cat $R/absr/compare.txt; pack
echo "done [$(el) s]"
