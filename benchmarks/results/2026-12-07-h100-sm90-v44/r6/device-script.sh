#!/bin/bash
# Device call (2026-12-07, thirty-eighth session): sm90-v44 r6. dec = the working tree's kernel built with
# -DNVFP4_SM90_LONE_DECODER=1: a decoder warpgroup writes each chunk's weight block, decoded, into a shared-memory
# ring of W' tiles, and the lone consumer warpgroup (16/32/48/64/96x1x1x1) issues its chains with A from shared memory;
# fin = 036c998's build (66a9c39's kernel; r4's). dec's Gpu.Sm90* and validate at M = 33, 48, 64, 80, 96; fin / dec on
# out and fc2 at M = 40, 48, 64, 80, 96, three rounds; racecheck of dec on 64x1x1x1.
set -u; TOTAL=${1:-330}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry109/fin ] || tar -xJf build/carry109.tar.xz -C build
[ -x build/carry112/dec ] || tar -xJf build/carry112.tar.xz -C build
A=$PWD/build/carry109; B=$PWD/build/carry112; R=$OUT/r6; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results6.tgz -C $OUT r6; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 40 $B/dec validate --rows 64 --linear out --candidate sm90 --quiet --out /tmp/vq > $R/dec-val-quick.txt 2>&1; rc=$?
echo "== dec validate M=64 out rc $rc $(grep -o 'status: [A-Z]*' $R/dec-val-quick.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
[ $rc = 0 ] || { tail -5 $R/dec-val-quick.txt; echo "stop: dec is not bit-exact or does not run"; exit 0; }
tools/sm90-ab $R/ab --bin fin=$A/fin --bin dec=$B/dec --rows 64,48,96,40,80 --rounds 3 --shapes attn_out_proj,mlp_fc2 --budget 90 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base fin > $R/ab-compare.txt 2>&1; cat $R/ab-compare.txt | head -12; pack
timeout 100 $B/dec_tests --gtest_filter='Gpu.Sm90*' > $R/dec-tests.txt 2>&1; echo "== dec Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/dec-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/dec-tests.txt | head -5; pack
for m in 33 48 80 96; do timeout 40 $B/dec validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/vs$m > $R/dec-val-m$m.txt 2>&1; echo "== dec validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/dec-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
[ $(el) -lt $(( TOTAL - 70 )) ] && { NVFP4_TEST_SM90_CONFIGS=64x1x1x1 timeout 65 compute-sanitizer --tool racecheck $B/dec_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/dec-racecheck.txt 2>&1; echo "== dec racecheck 64x1x1x1 rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/dec-racecheck.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack; }
echo "done [$(el) s]"
