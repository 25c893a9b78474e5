#!/bin/bash
# Device call (2026-12-07, thirty-fourth session): sm90-v39 r1. A deeper K-split ring in chunks. a3 = HEAD's kernel (462911f's
# SASS, = 07237d8's). c2 = -DNVFP4_SM90_KS_STAGE_CHUNKS=2 (two-chunk stages at 16 tokens: 16x1x1x1x3 twelve stages, 24
# chunks as now); c2s8 = c2 with -DNVFP4_SM90_KS_SLOTS_16=8 -DNVFP4_SM90_KS_SLOTS_32=8 (eight sum slots, groups of four:
# 16x1x1x1x3 eighteen stages = 36 chunks, 16x1x1x1x4 sixteen = 32, 32x1x1x1x2 ten = 20 instead of 12, 32x1x1x1x3 six);
# tc2s8 = c2s8 with -DNVFP4_SM90_TRACE. a3x2s8 = a3's 16x1x1x1x2 with eight four-chunk stages (NVFP4_SM90_MAX_STAGES=8).
# On an H200 first the README's H200 table anew with a3 (M = 16, 128, 4096, 32, 64) and the comparison columns.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry79/a3 ] || tar -xJf build/carry79.tar.xz -C build
B=$PWD/build/carry79; R=$OUT/r1; mkdir -p $R; cp "$0" $R/device-script.sh
w() { printf '#!/bin/bash\n%s exec %s "$@"\n' "$2" "$B/$3" > $B/$1; chmod +x $B/$1; }
w a3x2s8 "NVFP4_SM90_MAX_STAGES=8 NVFP4_SM90_CONFIG=16x1x1x1x2" a3
w c2x3 "NVFP4_SM90_CONFIG=16x1x1x1x3" c2
w c2s8x3 "NVFP4_SM90_CONFIG=16x1x1x1x3" c2s8
w c2s8x4 "NVFP4_SM90_CONFIG=16x1x1x1x4" c2s8
w c2s8x2 "NVFP4_SM90_CONFIG=32x1x1x1x2" c2s8
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results1.tgz -C $OUT r1; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
if grep -q H200 $R/device.txt; then
  tools/sm90-ab $R/tab --bin a3=$B/a3 --rows 16,128,4096,32,64 --rounds 2 --budget 250 --timeout 60 > $R/tab.txt 2>&1; echo "== tab rc $? [$(el) s]"
  python3 tools/bench-compare $R/tab --markdown a3 > $R/tab-markdown.txt 2>&1; cat $R/tab-markdown.txt; pack
  for m in 16 128; do
    timeout 60 $B/a3 bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream,comfy-hopper,cublas-fp8 --commit 462911f --out $R/cols-m$m.json > $R/cols-m$m.txt 2>&1; echo "== cols M=$m rc $? [$(el) s]"; pack
  done
fi
timeout 60 $B/c2s8_tests --gtest_filter='Gpu.Sm90*' > $R/c2s8-tests.txt 2>&1; echo "== c2s8 Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/c2s8-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/c2s8-tests.txt | head -4; pack
tools/sm90-ab $R/ab16 --bin a3=$B/a3 --bin c2x3=$B/c2x3 --bin c2s8x3=$B/c2s8x3 --bin c2s8x4=$B/c2s8x4 --bin a3x2s8=$B/a3x2s8 --rows 16,8 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 90 > $R/ab16.txt 2>&1; echo "== ab16 rc $? [$(el) s]"
python3 tools/bench-compare $R/ab16 --base a3 > $R/ab16-compare.txt 2>&1; cat $R/ab16-compare.txt | head -20; pack
tools/sm90-ab $R/ab32 --bin a3=$B/a3 --bin c2s8=$B/c2s8 --bin c2s8x2=$B/c2s8x2 --rows 32,24 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 70 > $R/ab32.txt 2>&1; echo "== ab32 rc $? [$(el) s]"
python3 tools/bench-compare $R/ab32 --base a3 > $R/ab32-compare.txt 2>&1; cat $R/ab32-compare.txt | head -12; pack
[ $(el) -lt 480 ] && { NVFP4_TEST_SM90_CONFIGS=16x1x1x1x3,16x1x1x1x4,32x1x1x1x2 timeout 70 compute-sanitizer --tool racecheck $B/c2s8_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/racecheck.txt 2>&1; echo "== c2s8 racecheck rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/racecheck.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack; }
for c in 16x1x1x1x3 32x1x1x1x2; do
  [ $(el) -lt 550 ] || break
  m=${c%%x*}
  NVFP4_SM90_CONFIG=$c NVFP4_SM90_TRACE_OUT=$R/trace-c2s8-m$m-$c.txt timeout 30 $B/tc2s8 bench --no-quantizer --rows $m --iters 3 --warmup 1 --backend sm90 --shapes attn_out_proj --commit tc2s8 > $R/trace-c2s8-m$m-$c.run.txt 2>&1
  python3 tools/sm90-trace-summary $R/trace-c2s8-m$m-$c.txt > $R/trace-c2s8-m$m-$c-summary.txt 2>&1; grep -E "ns/chunk" $R/trace-c2s8-m$m-$c-summary.txt | head -9; pack
done
echo "done [$(el) s]"
