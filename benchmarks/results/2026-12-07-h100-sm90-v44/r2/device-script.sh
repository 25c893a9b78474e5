#!/bin/bash
# Device call (2026-12-07, thirty-eighth session): sm90-v44 r2. hd, trh as r1 (HEAD's kernel, its trace build);
# l3 = -DNVFP4_SM90_SMALL_COPY3=2: three copy threads (weight, A', records) for every tile of one consumer
# warpgroup (16/32/48/64/96x1x1x1) besides the 128-token ones; l3s10 = l3 with ten ring stages for KS = 1 tiles of
# up to 64 tokens. Traces of out at M = 64 (trh, trl3), hd / l3 / l3s10 on out and fc2 at M = 40, 48, 64, 80, 96, 128
# and on qkv / fc1 at M = 16 (their configurations unchanged: the noise), four rounds; l3's bits (Gpu.Sm90*,
# validate at M = 33, 48, 64, 96, 128), racecheck and memcheck on the lone-warpgroup configurations.
set -u; TOTAL=${1:-420}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry106/hd ] || tar -xJf build/carry106.tar.xz -C build
[ -x build/carry107/l3 ] || tar -xJf build/carry107.tar.xz -C build
A=$PWD/build/carry106; B=$PWD/build/carry107; R=$OUT/r2; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results2.tgz -C $OUT r2; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
for b in trh trl3; do
  d=$A; [ $b = trl3 ] && d=$B
  NVFP4_SM90_TRACE_OUT=$R/trace-$b-out-m64.txt timeout 30 $d/$b bench --no-quantizer --rows 64 --iters 3 --warmup 1 --backend sm90 --shapes attn_out_proj --commit $b > $R/trace-$b.run.txt 2>&1
  echo "== trace $b rc $? [$(el) s]"
  python3 tools/sm90-trace-summary --tile-chunks 112 $R/trace-$b-out-m64.txt $R/trace-$b-out-m64.txt.wg > $R/trace-$b-summary.txt 2>&1; grep -E 'e8 ->|e0 ->|warpgroup 0' $R/trace-$b-summary.txt
done; pack
tools/sm90-ab $R/ab --bin hd=$A/hd --bin l3=$B/l3 --bin l3s10=$B/l3s10 --rows 64,48,96,128,40,80 --rounds 4 --shapes attn_out_proj,mlp_fc2 --budget 130 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
tools/sm90-ab $R/ab16 --bin hd=$A/hd --bin l3=$B/l3 --rows 16 --rounds 3 --shapes attn_qkv_proj,mlp_fc1 --budget 40 > $R/ab16.txt 2>&1; echo "== ab16 rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base hd > $R/ab-compare.txt 2>&1; cat $R/ab-compare.txt | head -30
python3 tools/bench-compare $R/ab16 --base hd > $R/ab16-compare.txt 2>&1; cat $R/ab16-compare.txt | head -8; pack
timeout 120 $B/l3_tests --gtest_filter='Gpu.Sm90*' > $R/l3-tests.txt 2>&1; echo "== l3 Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/l3-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/l3-tests.txt | head -5; pack
for m in 33 48 64 96 128; do timeout 40 $B/l3 validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/vs$m > $R/l3-val-m$m.txt 2>&1; echo "== l3 validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/l3-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
for t in racecheck memcheck; do
  [ $(el) -gt $(( TOTAL - 90 )) ] && break
  NVFP4_TEST_SM90_CONFIGS=16x1x1x1,64x1x1x1,96x1x1x1 timeout 80 compute-sanitizer --tool $t $B/l3_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/l3-$t.txt 2>&1
  echo "== l3 $t rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/l3-$t.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
done
echo "done [$(el) s]"
