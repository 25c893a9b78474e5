#!/bin/bash
# sm90-v48 p3: fin = 06401c2's build (two chunks per CTA for large activations, packed A and bf16 x; the GEMM's
# SASS equals p2's pp4 in all 30 configurations); head = 9180e57's build; pp1 = p2's pp1 (the old pre-pass
# everywhere). fin's bits (Gpu.Sm90*, Gpu.Amax*, validate default), then head / pp1 / fin alternated at
# M = 4096 and 1024 on sm90-stream (bf16 x) and sm90 (packed A), rounds while time is left.
set -u; TOTAL=${1:-330}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry57/fin ] || tar -xJf build/carry57.tar.xz -C build
B=$PWD/build/carry57; R=$OUT/p3; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/p3.tgz -C $OUT p3; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 150 $B/fin_tests --gtest_filter='Gpu.Sm90*:Gpu.Amax*' > $R/fin-tests.txt 2>&1; echo "== fin Gpu.Sm90*:Gpu.Amax* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/fin-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' -A3 $R/fin-tests.txt | head -12
(cd build/h && timeout 90 $B/fin validate --out /tmp/vdef > $R/fin-validate-default.txt 2>&1; echo "rc $?" >> $R/fin-validate-default.txt)
echo "== fin validate (default) $(tail -1 $R/fin-validate-default.txt) $(grep -o 'status: [A-Z]*' $R/fin-validate-default.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
A=$R/ab; mkdir -p $A
for x in 1 2 3; do
  for m in 4096 1024; do
    bins="head pp1 fin"; [ $x = 2 ] && bins="fin pp1 head"
    for b in $bins; do
      [ $(el) -gt $(( TOTAL - 12 )) ] && break 3
      it=10; timeout 60 $B/$b bench --no-quantizer --rows $m --iters $it --backend sm90,sm90-stream --commit $b --out $A/$b-m$m-$x.json > $A/$b-m$m-$x.txt 2>&1
      echo "$b M=$m round $x rc $?: $(grep -E 'pre-pass alone' $A/$b-m$m-$x.txt | sed -E 's/ +/ /g;s/^([a-z0-9_]+) [0-9x]+ (sm90[a-z-]*) .*pre-pass alone ([0-9.]+) us.*/\1 \2 \3/' | tr '\n' ';') [$(el) s]"
    done
  done; pack
done
pack; echo "done [$(el) s]"
