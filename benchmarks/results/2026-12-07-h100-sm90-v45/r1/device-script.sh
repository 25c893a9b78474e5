#!/bin/bash
# Device call (2026-12-07, thirty-ninth session): sm90-v45 r1. fin = HEAD's kernel (carry109); pd = the one-chain
# loop with two fragment buffers (-DNVFP4_SM90_PREDECODE_BM=16: chunk c + 1 decoded under chunk c's MMAs, on every
# one-chain tile of up to three warpgroups but 96x3x1x1). pd's bits (Gpu.Sm90*, validate at M = 16, 64, 96, 128,
# 333), then fin / pd alternated on the four linears at M = 16, 128, 4096, 64, 32, 96, 256, 1024, three
# rounds; pd4 = pd with two fragment buffers on 16x4x1x1 and 32x4x1x1 too (-DNVFP4_SM90_PREDECODE_FOUR=1): fc1 at
# M = 16, 32 against fin and pd; then racecheck / memcheck of pd on one-chain configurations.
set -u; TOTAL=${1:-560}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry109/fin ] || tar -xJf build/carry109.tar.xz -C build
[ -x build/carry115/pd4 ] || tar -xJf build/carry115.tar.xz -C build
A=$PWD/build/carry109; B=$PWD/build/carry115; R=$OUT/r1; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results1.tgz -C $OUT r1; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 150 $B/pd_tests --gtest_filter='Gpu.Sm90*' > $R/pd-tests.txt 2>&1; echo "== pd Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/pd-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/pd-tests.txt | head -5; pack
for m in 16 64 96 128 333; do (cd build/h && timeout 40 $B/pd validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/vs$m > $R/pd-val-m$m.txt 2>&1; echo "== pd validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/pd-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"); done; pack
left=$(( TOTAL - $(el) - 150 ))
tools/sm90-ab $R/ab --bin fin=$A/fin --bin pd=$B/pd --rows 16,128,4096,64,32,96,256,1024 --rounds 3 --budget $left > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base fin > $R/ab-compare.txt 2>&1; head -40 $R/ab-compare.txt; pack
tools/sm90-ab $R/ab4 --bin fin=$A/fin --bin pd=$B/pd --bin pd4=$B/pd4 --rows 16,32 --rounds 3 --shapes mlp_fc1 --budget 35 > $R/ab4.txt 2>&1; echo "== ab4 rc $? [$(el) s]"
python3 tools/bench-compare $R/ab4 --base fin > $R/ab4-compare.txt 2>&1; head -8 $R/ab4-compare.txt; pack
for t in racecheck memcheck; do
  [ $(el) -gt $(( TOTAL - 60 )) ] && break
  NVFP4_TEST_SM90_CONFIGS=16x3x1x1,64x1x1x1,128x2x1x1 timeout 50 compute-sanitizer --tool $t $B/pd_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/pd-$t.txt 2>&1
  echo "== pd $t rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/pd-$t.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
done
echo "done [$(el) s]"
