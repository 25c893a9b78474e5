#!/usr/bin/env bash
# one-off device call: sm90-v19 r5: the two-chain tiles' trip on the warp's lanes too (new) against 692226e (base); every other configuration's SASS is r4's
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
summ() { python3 - "$1" <<'PY'
import sys
rows=[l.split() for l in open(sys.argv[1]) if not l.startswith('#')]
ends=sorted(int(r[2]) for r in rows); n=len(ends)
print('CTA end us: min %.1f med %.1f max %.1f' % (ends[0]/1e3, ends[n//2]/1e3, ends[-1]/1e3))
PY
}
(cd build/h && timeout 240 ../carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1); echo "== tests rc $? $(grep -E 'PASSED|FAILED' $R/tests.txt | head -3)"
for m in 1 65 96 128 333; do timeout 120 $B/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/val-m$m.txt 2>&1; echo "== validate m$m rc $? $(grep -o "status: [A-Z]*" $R/val-m$m.txt)"; done
NVFP4_SM90_CONFIG=128x3x1x2 timeout 120 $B/new validate --linear qkv,out,fc1,fc2 --rows 256 --candidate sm90 --quiet --out /tmp/vf > $R/val-forced-128x3x1x2-m256.txt 2>&1; echo "== validate forced 128x3x1x2 m256 rc $? $(grep -o "status: [A-Z]*" $R/val-forced-128x3x1x2-m256.txt)"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/new_tests --gtest_filter='Gpu.Sm90SlowPathAdversarial*' > $R/memcheck.txt 2>&1; echo "== memcheck rc $? $(tail -1 $R/memcheck.txt)"
for cfg in 128x3x1x2; do NVFP4_SM90_CONFIG=$cfg timeout 100 compute-sanitizer --tool racecheck $B/new validate --shapes san:300:1000 --rows 150 --candidate sm90 --quiet --out /tmp/san > $R/racecheck-$cfg.txt 2>&1; echo "== racecheck $cfg rc $? $(grep -E 'hazard|ERROR SUMMARY' $R/racecheck-$cfg.txt | tail -1)"; done
for m in 128 96; do for b in basestats newstats; do
  NVFP4_SM90_CTA_STATS_OUT=$R/st-$b-m$m-qkv.txt timeout 90 $B/$b bench --no-quantizer --rows $m --shapes qkv --iters 3 --warmup 1 --backend sm90 --commit $b --out $R/st-$b-m$m-qkv.json > /dev/null 2>&1
  echo "== stats $b m$m qkv: $(summ $R/st-$b-m$m-qkv.txt)"; done; done
for m in 128 96; do for b in base new base new; do timeout 120 $B/$b bench --no-quantizer --rows $m --shapes qkv --iters 30 --backend sm90 --commit $b --out $R/m$m-qkv-$b.json > $R/m$m-qkv-$b.txt 2>&1; echo "== m$m $b $(grep -E 'sm90 ' $R/m$m-qkv-$b.txt | grep -v 'of which' | sed -e 's/ TFLOP.*x cuBLAS/ x/' | cut -c1-100)"; done; done
tar -czf $OUT/results.tgz -C $OUT r
