#!/bin/bash
# Device call (2026-12-07, thirty-eighth session): sm90-v44 r1. hd = HEAD 4757fbb's kernel (the build of the
# working tree with its measurement switches at their defaults); c3 = -DNVFP4_SM90_SMALL_COPY3=1: the one-chain
# tiles below 128 tokens get three copy threads (weight, A', records; one per warp) as the 128-token ones have;
# c3s10 = c3 with ten ring stages instead of six for KS = 1 tiles of up to 64 tokens. Bits of c3 (Gpu.Sm90*,
# validate), hd / c3 / c3s10 on every linear at M = 16, 32, 64 (three rounds), traces of qkv at M = 16 (trh, trc3).
set -u; TOTAL=${1:-420}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry106/c3 ] || tar -xJf build/carry106.tar.xz -C build
B=$PWD/build/carry106; R=$OUT/r1; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results1.tgz -C $OUT r1; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
for b in trh trc3; do
  NVFP4_SM90_TRACE_OUT=$R/trace-$b-qkv-m16.txt timeout 30 $B/$b bench --no-quantizer --rows 16 --iters 3 --warmup 1 --backend sm90 --shapes attn_qkv_proj --commit $b > $R/trace-$b.run.txt 2>&1
  echo "== trace $b rc $? [$(el) s]"
  python3 tools/sm90-trace-summary $R/trace-$b-qkv-m16.txt > $R/trace-$b-summary.txt 2>&1; head -40 $R/trace-$b-summary.txt
done; pack
tools/sm90-ab $R/ab --bin hd=$B/hd --bin c3=$B/c3 --bin c3s10=$B/c3s10 --rows 16,32,64 --rounds 3 --budget 150 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base hd > $R/ab-compare.txt 2>&1; cat $R/ab-compare.txt | head -30; pack
timeout 120 $B/c3_tests --gtest_filter='Gpu.Sm90*' > $R/c3-tests.txt 2>&1; echo "== c3 Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/c3-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/c3-tests.txt | head -5; pack
for m in 16 32 64; do timeout 40 $B/c3 validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/vs$m > $R/c3-val-m$m.txt 2>&1; echo "== c3 validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/c3-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
echo "done [$(el) s]"
