#!/bin/bash
# Device call (2026-12-06, thirty-third session): sm90-v38 r4, prepared and not run (no device time left; three calls found no machine). Does a deeper K-split ring pay now? (v38 r1's trace of
# 16x1x1x1x3: each chunk-sum warpgroup waits 250-320 ns per four-chunk stage for its next stage to land, ~1.0-1.2 us after
# its copies went out.) a3 = 07237d8's kernel (r2's a3); s32 / s32_tests / ts32 = the tree with -DNVFP4_SM90_KS_SLOTS_32=8
# (eight chunk-sum slots at 17-32 tokens instead of sixteen: 32x1x1x1x2 gets ten ring stages instead of six; 32x1x1x1x3
# stays at six, its stages a multiple of six; ts32 with -DNVFP4_SM90_TRACE); a3s8 = a3 under NVFP4_SM90_MAX_STAGES=8
# (16x1x1x1x2: eight stages instead of its cap of four; 16x1x1x1x3 keeps six).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry78/a3 ] || tar -xJf build/carry78.tar.xz -C build
B=$PWD/build/carry78; R=$OUT/r4; mkdir -p $R; cp "$0" $R/device-script.sh
printf '#!/bin/bash\nNVFP4_SM90_MAX_STAGES=8 exec %s "$@"\n' "$B/a3" > $B/a3s8; chmod +x $B/a3s8
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results4.tgz -C $OUT r4; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 60 $B/s32_tests --gtest_filter='Gpu.Sm90*' > $R/s32-tests.txt 2>&1; echo "== s32 Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/s32-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/s32-tests.txt | head -4; pack
tools/sm90-ab $R/ab32 --bin a3=$B/a3 --bin s32=$B/s32 --rows 32,24 --rounds 2 --shapes attn_out_proj,mlp_fc2 --sm90-config 32x1x1x1x2,32x1x1x1x3 --budget 60 > $R/ab32.txt 2>&1; echo "== ab32 rc $? [$(el) s]"
grep -E "^(a3|s32) " $R/ab32.txt | sed 's/ TFLOP[^;|]*//g' | head -16; pack
tools/sm90-ab $R/ab16 --bin a3=$B/a3 --bin a3s8=$B/a3s8 --rows 16,8 --rounds 2 --shapes attn_out_proj,mlp_fc2 --sm90-config 16x1x1x1x2,16x1x1x1x3 --budget 60 > $R/ab16.txt 2>&1; echo "== ab16 rc $? [$(el) s]"
grep -E "^(a3|a3s8) " $R/ab16.txt | sed 's/ TFLOP[^;|]*//g' | head -16; pack
NVFP4_TEST_SM90_CONFIGS=32x1x1x1x2,32x1x1x1x3 timeout 60 compute-sanitizer --tool racecheck $B/s32_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/racecheck.txt 2>&1; echo "== s32 racecheck rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/racecheck.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
for c in 32x1x1x1x2 32x1x1x1x3; do
  NVFP4_SM90_TRACE_OUT=$R/trace-s32-m32-$c.txt timeout 30 $B/ts32 bench --no-quantizer --rows 32 --iters 3 --warmup 1 --backend sm90 --sm90-config $c --shapes attn_out_proj --commit ts32 > $R/trace-s32-m32-$c.run.txt 2>&1
  python3 tools/sm90-trace-summary $R/trace-s32-m32-$c.txt > $R/trace-s32-m32-$c-summary.txt 2>&1; grep -E "stages|ns/chunk|->" $R/trace-s32-m32-$c-summary.txt | grep -E "stages|e2 |e7 |->" | head -8; pack
done
echo "done [$(el) s]"
