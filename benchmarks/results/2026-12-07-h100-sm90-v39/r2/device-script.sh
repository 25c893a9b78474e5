#!/bin/bash
# Device call (2026-12-07, thirty-fourth session): sm90-v39 r2. a3 = HEAD 462911f's kernel (carry79's a3); nd = a3's tree
# with -DNVFP4_SM90_KS_NEXT_DECODE=1 (a K-split chunk-sum warpgroup decodes its next stage's first chunk under its stage's
# last MMAs: r1's trace of a3 read ~288 ns from a stage's last sums to the next stage's first MMA issue, a wait and a decode
# with no MMA in flight); tnd / ta3d = the two with -DNVFP4_SM90_TRACE. On an H200 first the README's H200 table with a3.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry80/a3 ] || tar -xJf build/carry80.tar.xz -C build
B=$PWD/build/carry80; R=$OUT/r2; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results2.tgz -C $OUT r2; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 60 $B/nd_tests --gtest_filter='Gpu.Sm90*' > $R/nd-tests.txt 2>&1; echo "== nd Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/nd-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure|sm90 kernel:' $R/nd-tests.txt | head -4; pack
tools/sm90-ab $R/ab --bin a3=$B/a3 --bin nd=$B/nd --rows 16,32,8,24 --rounds 3 --shapes attn_out_proj,mlp_fc2 --budget 100 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base a3 > $R/ab-compare.txt 2>&1; cat $R/ab-compare.txt | head -12; pack
for c in 16x1x1x1x3 32x1x1x1x3; do
  m=${c%%x*}
  for b in tnd ta3d; do
    NVFP4_SM90_CONFIG=$c NVFP4_SM90_TRACE_OUT=$R/trace-$b-m$m.txt timeout 30 $B/$b bench --no-quantizer --rows $m --iters 3 --warmup 1 --backend sm90 --shapes attn_out_proj --commit $b > $R/trace-$b-m$m.run.txt 2>&1
    python3 tools/sm90-trace-summary $R/trace-$b-m$m.txt > $R/trace-$b-m$m-summary.txt 2>&1; echo "-- $b $c"; grep -E "e2 |e7 |e0 -> e2|e4 -> e7" $R/trace-$b-m$m-summary.txt | head -5
  done; pack
done
if grep -q H200 $R/device.txt; then
  tools/sm90-ab $R/tab --bin a3=$B/a3 --rows 16,128,4096,32,64 --rounds 2 --budget 220 --timeout 60 > $R/tab.txt 2>&1; echo "== tab rc $? [$(el) s]"
  python3 tools/bench-compare $R/tab --markdown a3 > $R/tab-markdown.txt 2>&1; cat $R/tab-markdown.txt; pack
  for m in 16 128; do
    [ $(el) -lt 500 ] || break
    timeout 50 $B/a3 bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream,comfy-hopper,cublas-fp8 --commit 462911f --out $R/cols-m$m.json > $R/cols-m$m.txt 2>&1; echo "== cols M=$m rc $? [$(el) s]"; pack
  done
fi
[ $(el) -lt 480 ] && { NVFP4_TEST_SM90_CONFIGS=16x1x1x1x2,16x1x1x1x3,16x1x1x1x4,32x1x1x1x2,32x1x1x1x3 timeout 100 compute-sanitizer --tool racecheck $B/nd_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/racecheck.txt 2>&1; echo "== nd racecheck rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/racecheck.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack; }
echo "done [$(el) s]"
