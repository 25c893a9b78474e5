#!/bin/bash
# Device call (2026-12-05, twenty-third session): sm90-v30 r1 + r2. Measurement builds from HEAD ac55482:
# cur = the default kernel. r1: sp = cur + v29's split2-not-run.diff (the lone 64-token one-chain
# warpgroup issues a chunk's four MMAs as two chains of two, added in fp32): bits, then cur / sp at
# M = 64 and 48 on out and fc2, three rounds. r2: ssw = cur + -DNVFP4_SM90_SMEM_W=1 (ssw.diff): every
# one-chain tile of 64 and 128 tokens takes W' (fp16, decoded from the prepacked blocks by a separate
# kernel) from shared memory, both MMA operands by descriptor, no decode in the consumers; built
# besides with 128x3x1x1, 64x2x2x1 and 64x4x1x1. Bits (GPU suite: every configuration; validate),
# then cur / ssw (W' kept per weight: NVFP4_SM90_W16_CACHE=1) at M = 4096, 128, 64, and at M = 4096
# ssw forced onto 128x3x1x1 (ssw3) and 64x2x2x1 (ssw4), and ssw decoding W' before every launch (sswd).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/ssw ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; R1=$OUT/r1; R2=$OUT/r2; mkdir -p $R1 $R2; cp dev27.sh $R1/device-script.sh; cp dev27.sh $R2/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R1/device.txt 2>&1; cp $R1/device.txt $R2/
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R1/device.txt)"
# r2's bits first (the new kernel path), then r1, then the timings
timeout 90 $B/ssw_tests --gtest_filter='Gpu.Sm90*' > $R2/ssw-tests.txt 2>&1; echo "== ssw tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R2/ssw-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED' $R2/ssw-tests.txt | head -5
for m in 64 128 333; do timeout 40 $B/ssw validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/dw$m > $R2/ssw-val-m$m.txt 2>&1; echo "== ssw validate M=$m rc $? $(grep -o "status: [A-Z]*" $R2/ssw-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
timeout 60 $B/sp_tests --gtest_filter='Gpu.Sm90*' > $R1/sp-tests.txt 2>&1; echo "== sp tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R1/sp-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED' $R1/sp-tests.txt | head -5
for m in 64 333; do timeout 30 $B/sp validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/dv$m > $R1/sp-val-m$m.txt 2>&1; echo "== sp validate M=$m rc $? $(grep -o "status: [A-Z]*" $R1/sp-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
tools/sm90-ab $R1 --bin cur=$B/cur --bin sp=$B/sp --rows 64,48 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 60 --timeout 40; echo "== r1 ab rc $? [$(el) s]"
tar -czf $OUT/results1.tgz -C $OUT r1
export NVFP4_SM90_W16_CACHE=1
printf '#!/bin/sh\nexec %s "$@" --sm90-config 128x3x1x1\n' $B/ssw > $B/ssw3
printf '#!/bin/sh\nexec %s "$@" --sm90-config 64x2x2x1\n' $B/ssw > $B/ssw4
printf '#!/bin/sh\nexec env -u NVFP4_SM90_W16_CACHE %s "$@"\n' $B/ssw > $B/sswd
chmod +x $B/ssw3 $B/ssw4 $B/sswd
tools/sm90-ab $R2 --bin cur=$B/cur --bin ssw=$B/ssw --bin ssw3=$B/ssw3 --bin ssw4=$B/ssw4 --bin sswd=$B/sswd --rows 4096 --rounds 2 --budget $(( 230 - $(el) )) --timeout 60; echo "== r2 ab 4096 rc $? [$(el) s]"
[ $(el) -lt 230 ] && { tools/sm90-ab $R2 --bin cur=$B/cur --bin ssw=$B/ssw --rows 128,64 --rounds 2 --budget $(( 280 - $(el) )) --timeout 40; echo "== r2 ab 128,64 rc $? [$(el) s]"; }
tar -czf $OUT/results2.tgz -C $OUT r2
echo "done [$(el) s]"
