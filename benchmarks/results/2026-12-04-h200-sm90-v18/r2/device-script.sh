#!/usr/bin/env bash
# one-off device call (not committed): sm90-v18 r2: the fallback without serial L2 round trips (thread-group test on registers; per-element path in batches whose loads issue together) against 760e84d (base): trip durations (CTA stats build), times at M = 4096 (outliers, N(0,1)), 128, 64, 32, 16; bits (validate, GPU suite); memcheck of the slow-path adversarial test
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
summ() { python3 - "$1" <<'PY'
import sys
rows=[l.split() for l in open(sys.argv[1]) if not l.startswith('#')]
ends=sorted(int(r[2]) for r in rows); n=len(ends)
trips=[l.split() for l in open(sys.argv[1]+'.trips') if not l.startswith('#')]
d=sorted(int(t[6]) for t in trips) or [0]; m=len(trips)
print('end us: med %.1f max %.1f | trips %d dur us med %.1f max %.1f sum %.1f' % (ends[n//2]/1e3, ends[-1]/1e3, m, d[len(d)//2]/1e3, d[-1]/1e3, sum(d)/1e3))
PY
}
for s in qkv fc2; do
  NVFP4_SM90_CTA_STATS_OUT=$R/stats-new-$s.txt timeout 120 build/carry/newstats bench --no-quantizer --rows 4096 --shapes $s --iters 3 --warmup 1 --backend sm90 --commit newstats --out $R/stats-new-$s.json > $R/stats-new-$s.out 2>&1
  echo "== stats new $s: $(summ $R/stats-new-$s.txt)"
done
for act in outliers normal; do for v in base new; do
  timeout 150 build/carry/$v bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --activations $act --commit $v --out $R/m4096-$act-$v.json >$R/m4096-$act-$v.txt 2>&1
  echo "== m4096 $act $v"; grep -E "sm90" $R/m4096-$act-$v.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
done; done
for m in 128 16 32 64; do for v in base new; do
  timeout 100 build/carry/$v bench --no-quantizer --rows $m --iters 30 --backend sm90 --commit $v --out $R/m$m-$v.json >$R/m$m-$v.txt 2>&1
  echo "== m$m $v"; grep -E "sm90 " $R/m$m-$v.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-90
done; done
for m in 1 16 128 333; do
timeout 60 build/carry/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v >$R/val-new-m$m.txt 2>&1; echo "val new m$m exit $? $(grep -E '^status' $R/val-new-m$m.txt | cut -c1-70)"
done
timeout 150 build/carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1; echo "tests exit $?"; tail -1 $R/tests.txt; grep FAILED $R/tests.txt | head -5
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 120 $CS --tool memcheck --error-exitcode 9 build/carry/new_tests --gtest_filter='Gpu.Sm90SlowPathAdversarial*' > $R/sanitize-memcheck.txt 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY' $R/sanitize-memcheck.txt | tail -1) $(grep -E 'PASSED|FAILED' $R/sanitize-memcheck.txt | tail -1)"
tar -czf $OUT/results.tgz -C $OUT r
