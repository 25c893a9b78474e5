#!/bin/bash
# sm90-v49 (prepared 2026-12-07, not run): fin = 41580e2's build; ts = 41580e2 with token-scale-words-not-run.diff: the pre-pass writes each
# token's scale word (4 bytes) instead of its 32-byte record, the trips rebuild the RowChunk from A'
# (sm90::token_chunk); ts512 = ts with the launcher's two-chunk threshold at 512 (token block, chunk) pairs.
# ts's bits (every Gpu.* test, validate default, memcheck of the trip-heavy tests), fin's (Gpu.Sm90*, Gpu.Amax*,
# validate), on an H200 the table on fin, then fin / ts alternated at M = 4096 and fin / ts / ts512 at 1024 (sm90,
# sm90-stream), fin / ts at M = 16, 128.
set -u; TOTAL=${1:-560}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
# build/carry.tar.xz: carry/{fin,fin_tests,ts,ts_tests,ts512} (README.md, "How to run it")
[ -x build/carry/ts ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; R=$OUT/v49; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/v49.tgz -C $OUT v49; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
tests() {  # NAME FILTER LIMIT
  timeout $3 $B/$1_tests --gtest_filter="$2" > $R/$1-tests.txt 2>&1; local rc=$?
  echo "== $1 $2 rc $rc $(grep -E '^\[  (PASSED|FAILED)' $R/$1-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' -A3 $R/$1-tests.txt | head -12
  (cd build/h && timeout 90 $B/$1 validate --out /tmp/v$1 > $R/$1-validate-default.txt 2>&1; echo "rc $?" >> $R/$1-validate-default.txt)
  echo "== $1 validate (default) $(tail -1 $R/$1-validate-default.txt) $(grep -o 'status: [A-Z]*' $R/$1-validate-default.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
}
tests ts 'Gpu.*' 200
tests fin 'Gpu.Sm90*:Gpu.Amax*' 90
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/ts_tests --gtest_filter='Gpu.Sm90SlowPathAdversarial*:Gpu.Sm90PrePassEqualsTheHostRecords:Gpu.Sm90KSplitWholeAndPartialStagesAndShortSlotGroups' > $R/ts-memcheck.txt 2>&1
echo "== ts memcheck rc $? $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' $R/ts-memcheck.txt | tr '\n' ' ') [$(el) s]"; pack
# On an H200 (none lent since results v28): the table on fin first, one round with every backend.
if grep -q H200 $R/device.txt && grep -q '^\[  PASSED' $R/fin-tests.txt; then
  T=$R/table; mkdir -p $T
  for m in 16 128 4096; do
    it=30; [ $m = 4096 ] && it=10
    timeout 90 $B/fin bench --no-quantizer --rows $m --iters $it --backend sm90,sm90-stream,comfy-hopper,cublas-fp8 --commit fin --out $T/fin-m$m-1.json > $T/fin-m$m-1.txt 2>&1
    echo "== H200 table M=$m rc $? [$(el) s]"; grep -E ' sm90 ' $T/fin-m$m-1.txt | grep -v pre-pass | sed -E 's/ +/ /g'
  done; pack
fi
A=$R/ab; mkdir -p $A
line() { grep -E 'sm90|pre-pass' $1 | grep -v '^#' | sed -E 's/ +/ /g' | awk -F'|' '{print $1 "|" $2 "|" $NF}' | tr '\n' ';'; }
for x in 1 2 3; do
  for m in 4096 1024; do
    bins="fin ts"; [ $x = 2 ] && bins="ts fin"; [ $m = 1024 ] && { bins="fin ts ts512"; [ $x = 2 ] && bins="ts512 ts fin"; }  # ts512 differs from ts below 1024 pairs only
    for b in $bins; do
      [ $(el) -gt $(( TOTAL - 40 )) ] && break 3
      timeout 60 $B/$b bench --no-quantizer --rows $m --iters 10 --backend sm90,sm90-stream --commit $b --out $A/$b-m$m-$x.json > $A/$b-m$m-$x.txt 2>&1
      echo "$b M=$m round $x rc $?: $(line $A/$b-m$m-$x.txt | cut -c1-400) [$(el) s]"
    done
  done; pack
  if [ $x = 1 ]; then for m in 16 128; do for b in fin ts; do
    [ $(el) -gt $(( TOTAL - 40 )) ] && break 3
    timeout 60 $B/$b bench --no-quantizer --rows $m --iters 30 --backend sm90 --commit $b --out $A/$b-m$m-$x.json > $A/$b-m$m-$x.txt 2>&1
    echo "$b M=$m round $x rc $? [$(el) s]"
  done; done; pack; fi
done
pack; echo "done [$(el) s]"
