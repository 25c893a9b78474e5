#!/usr/bin/env bash
# one-off device call: sm90-v19 r8: the verdict lane prefetches a failing tile's thread-group and token records into L1 (new) against 302b94a (base)
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
trips=[l.split() for l in open(sys.argv[1]+'.trips') if not l.startswith('#')]
d=sorted(int(t[6]) for t in trips) or [0]; m=len(trips)
print('CTA end us: med %.1f max %.1f | trips %d dur us p10 %.1f med %.1f p90 %.1f max %.1f' % (ends[n//2]/1e3, ends[-1]/1e3, m, d[len(d)//10]/1e3, d[len(d)//2]/1e3, d[len(d)*9//10]/1e3, d[-1]/1e3))
PY
}
(cd build/h && timeout 240 ../carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1); echo "== tests rc $? $(grep -E 'PASSED|FAILED' $R/tests.txt | head -3)"
for m in 64 128; do timeout 120 $B/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/val-m$m.txt 2>&1; echo "== validate m$m rc $? $(grep -o "status: [A-Z]*" $R/val-m$m.txt)"; done
for c in "64 qkv" "128 qkv" "4096 qkv"; do set -- $c; for b in basestats newstats; do
  NVFP4_SM90_CTA_STATS_OUT=$R/st-$b-m$1-$2.txt timeout 90 $B/$b bench --no-quantizer --rows $1 --shapes $2 --iters 3 --warmup 1 --backend sm90 --commit $b --out $R/st-$b-m$1-$2.json > /dev/null 2>&1
  echo "== stats $b m$1 $2: $(summ $R/st-$b-m$1-$2.txt)"; done; done
for m in 64 128; do for b in base new base new; do timeout 120 $B/$b bench --no-quantizer --rows $m --shapes qkv,fc1 --iters 30 --backend sm90 --commit $b --out $R/m$m-$b.json > $R/m$m-$b.txt 2>&1; echo "== m$m $b"; grep -E "sm90 " $R/m$m-$b.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100; done; done
for b in base new; do timeout 200 $B/$b bench --no-quantizer --rows 4096 --shapes qkv,fc1,fc2 --iters 10 --backend sm90 --commit $b --out $R/m4096-$b.json > $R/m4096-$b.txt 2>&1; echo "== m4096 $b"; grep -E "sm90 " $R/m4096-$b.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100; done
tar -czf $OUT/results.tgz -C $OUT r
