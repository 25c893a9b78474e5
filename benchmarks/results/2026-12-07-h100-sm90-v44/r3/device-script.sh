#!/bin/bash
# Device call (2026-12-07, thirty-eighth session): sm90-v44 r3. hd2 = the working tree's build (4757fbb with three copy
# threads for every lone-warpgroup tile: l3's SASS in every configuration); er = hd2 with the early ready wait (and so
# the early release) on the lone 48- and 64-token warpgroups too (-DNVFP4_SM90_EARLY_READY_BM=48); rl = hd2 with the
# early release on every one-chain tile of up to 64 tokens (-DNVFP4_SM90_EARLY_RELEASE_BM=64); cs1 / cs3 = per-CTA
# statistics builds with one copy thread everywhere / hd2's. CTA statistics of out at M = 64 and fc2 at M = 48;
# hd2 / er / rl on every linear at M = 40 and 64, three rounds; racecheck of hd2 on 64x1x1x1 and 48x1x1x1; every GPU test.
set -u; TOTAL=${1:-420}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry108/hd2 ] || tar -xJf build/carry108.tar.xz -C build
B=$PWD/build/carry108; R=$OUT/r3; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results3.tgz -C $OUT r3; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
for b in cs1 cs3; do
  for ms in 64:attn_out_proj 48:mlp_fc2; do m=${ms%%:*}; s=${ms#*:}
    NVFP4_SM90_CTA_STATS_OUT=$R/st-$b-m$m-$s.txt timeout 60 $B/$b bench --no-quantizer --rows $m --shapes $s --iters 3 --warmup 1 --backend sm90 --commit $b > $R/st-$b-m$m-$s.run.txt 2>&1
    python3 tools/sm90-cta-stats $R/st-$b-m$m-$s.txt > $R/st-$b-m$m-$s.summary.txt 2>&1; echo "== $b M=$m $s [$(el) s]"; head -6 $R/st-$b-m$m-$s.summary.txt
  done
done; pack
tools/sm90-ab $R/ab --bin hd2=$B/hd2 --bin er=$B/er --bin rl=$B/rl --rows 40,64 --rounds 3 --budget 110 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base hd2 > $R/ab-compare.txt 2>&1; cat $R/ab-compare.txt | head -12; pack
for c in 64x1x1x1 48x1x1x1; do
  [ $(el) -gt $(( TOTAL - 150 )) ] && break
  NVFP4_TEST_SM90_CONFIGS=$c timeout 120 compute-sanitizer --tool racecheck $B/hd2_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/hd2-racecheck-$c.txt 2>&1
  echo "== hd2 racecheck $c rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/hd2-racecheck-$c.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
done
[ $(el) -lt $(( TOTAL - 100 )) ] && { timeout 95 $B/hd2_tests --gtest_filter='Gpu.*' --gtest_output=json:$R/gpu-tests.json > $R/gpu-tests.txt 2>&1; echo "== hd2 Gpu.* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/gpu-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED' $R/gpu-tests.txt | head; pack; }
echo "done [$(el) s]"
