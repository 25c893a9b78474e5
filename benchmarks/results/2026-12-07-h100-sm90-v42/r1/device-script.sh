#!/bin/bash
# Device call (2026-12-07, thirty-seventh session): sm90-v42 r1. hd = HEAD's kernel (462911f's machine code);
# kp2c = hd with v41's kp (a K-split chunk-sum warpgroup keeps two chunks' MMAs in flight) for two-chunk stages only
# (-DNVFP4_SM90_KS_PIPE=1 -DNVFP4_SM90_KS_PIPE_TWO_ONLY=1: 32x1x1x1x2 and x3 change, 28 configurations keep hd's SASS),
# kp2c_tests its tests. First ncu (tools/ncu-one) of one warm launch of out at M = 16 on 16x1x1x1x3 (hd), then kp2c's
# bits (Gpu.Sm90*, validate M = 17, 24, 32, racecheck + memcheck on 32x1x1x1x2/x3), an A/B at M = 17, 24, 32, ncu of
# 16x1x1x1x2, and, on an H200 with time left, the README's table for hd.
set -u; TOTAL=${1:-420}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry97/kp2c ] || tar -xJf build/carry97.tar.xz -C build
B=$PWD/build/carry97; R=$OUT/r1; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results1.tgz -C $OUT r1; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
ncu1() {  # config rows
  tools/ncu-one $R/ncu out-m$2-$1 --skip 6 --raw --timeout 120 -- $B/hd bench --no-quantizer --rows $2 --shapes attn_out_proj \
    --iters 3 --warmup 5 --backend sm90 --sm90-config $1 --commit hd 2>&1 | head -30; echo "== ncu $1 [$(el) s]"
}
ncu1 16x1x1x1x3 16; pack
timeout 90 $B/kp2c_tests --gtest_filter='Gpu.Sm90*' > $R/kp2c-tests.txt 2>&1; echo "== kp2c Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/kp2c-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/kp2c-tests.txt | head -5; pack
for m in 17 24 32; do timeout 40 $B/kp2c validate --rows $m --linear out,fc2 --candidate sm90,sm90-stream --quiet --out /tmp/vk$m > $R/kp2c-val-m$m.txt 2>&1; echo "== kp2c validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/kp2c-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
tools/sm90-ab $R/ab --bin hd=$B/hd --bin kp2c=$B/kp2c --rows 32,17,24 --rounds 3 --shapes attn_out_proj,mlp_fc2 --budget 75 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base hd > $R/ab-compare.txt 2>&1; head -12 $R/ab-compare.txt; pack
for t in racecheck memcheck; do
  [ $(el) -gt $(( TOTAL - 150 )) ] && break
  NVFP4_TEST_SM90_CONFIGS=32x1x1x1x2,32x1x1x1x3 timeout 120 compute-sanitizer --tool $t $B/kp2c_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/kp2c-$t.txt 2>&1
  echo "== kp2c $t rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/kp2c-$t.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
done
[ $(el) -lt $(( TOTAL - 90 )) ] && { ncu1 16x1x1x1x2 16; pack; }
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
if echo "$name" | grep -q H200; then
  T=$OUT/t; mkdir -p $T; cp $R/device.txt $T/
  row() { grep -E ' sm90 ' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//;s/ sm90 //' | tr -s ' ' | tr '\n' ';'; }
  for x in 1 2; do
    for m in 16 4096 128 32 64; do
      [ $(el) -gt $(( TOTAL - 40 )) ] && break
      it=30; [ $m = 4096 ] && it=10
      be=sm90; [ $x = 1 ] && { [ $m = 16 ] || [ $m = 128 ]; } && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
      timeout 60 $B/hd bench --no-quantizer --rows $m --iters $it --backend $be --commit HEAD --out $T/hd-m$m-$x.json > $T/hd-m$m-$x.txt 2>&1
      echo "hd-m$m-$x: $(row $T/hd-m$m-$x.txt) [$(el) s]"
    done
    tar -czf $OUT/table.tgz -C $OUT t
  done
fi
echo "done [$(el) s]"
