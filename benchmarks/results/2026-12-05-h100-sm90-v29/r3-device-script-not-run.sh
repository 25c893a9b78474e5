#!/bin/bash
# Device call (2026-12-05, twenty-second session): sm90-v29 r3. sp = cur + -DNVFP4_SM90_SPLIT2=1 (the
# lone one-chain warpgroup of up to 64 tokens issues a chunk's four MMAs as two chains of two and adds
# them in fp32). sp's bits first (GPU suite, validate), then cur and sp in alternation at M = 64
# (64x1x1x1 on out and fc2), three rounds.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/sp ] || tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r3; mkdir -p $R; cp dev24.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 60 $B/sp_tests --gtest_filter='Gpu.Sm90*' > $R/sp-tests.txt 2>&1; echo "== sp tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/sp-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED' $R/sp-tests.txt | head -5
for m in 64 333; do timeout 30 $B/sp validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/dv$m > $R/sp-val-m$m.txt 2>&1; echo "== sp validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/sp-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
tools/sm90-ab $R --bin cur=$B/cur --bin sp=$B/sp --rows 64 --rounds 3 --shapes attn_out_proj,mlp_fc2 --budget 60 --timeout 40; echo "== ab rc $? [$(el) s]"
tar -czf $OUT/results3.tgz -C $OUT r3
echo "done [$(el) s]"
