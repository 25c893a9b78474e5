#!/bin/bash
# sm90-v48 p2: the packed-A pre-pass with several chunks per CTA (sm90_prep_a_chunks). head = 9180e57's build;
# pp1 / pp2 / pp4 = the working tree on 271a9f0 with the launcher's chunks per CTA for large packed A at 1 / 2 / 4
# (-DNVFP4_SM90_PREP_CPB; pp1 runs the old kernel, refactored, everywhere). pp4's bits (Gpu.Sm90*, Gpu.Amax*,
# validate default), ncu of the pre-pass (head, pp4) at fc2 M = 4096, then head / pp1 / pp2 / pp4 alternated at
# M = 4096 and 1024, head / pp4 at M = 16, 128, 64, and on an H200 the table on pp4 while time is left.
set -u; TOTAL=${1:-560}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry56/pp4 ] || tar -xJf build/carry56.tar.xz -C build
B=$PWD/build/carry56; R=$OUT/p2; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 150 $B/pp4_tests --gtest_filter='Gpu.Sm90*:Gpu.Amax*' > $R/pp4-tests.txt 2>&1; trc=$?; echo "== pp4 Gpu.Sm90*:Gpu.Amax* rc $trc $(grep -E '^\[  (PASSED|FAILED)' $R/pp4-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED' $R/pp4-tests.txt | head -5
(cd build/h && timeout 90 $B/pp4 validate --out /tmp/vdef > $R/pp4-validate-default.txt 2>&1; echo "rc $?" >> $R/pp4-validate-default.txt)
echo "== pp4 validate (default) $(tail -1 $R/pp4-validate-default.txt) $(grep -o 'status: [A-Z]*' $R/pp4-validate-default.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
for b in head pp4; do
  tools/ncu-one $R pre-$b --kernel sm90_prep_a --skip 4 --source --timeout 60 -- $B/$b bench --no-quantizer --rows 4096 --shapes mlp_fc2 --iters 3 --warmup 2 --backend sm90 > $R/ncu-sum-$b.txt 2>&1
  echo "== ncu $b rc $? [$(el) s]"; head -8 $R/ncu-sum-$b.txt
done
res=100; grep -q H200 $R/device.txt && res=200
tools/sm90-ab $R/ab --bin head=$B/head --bin pp1=$B/pp1 --bin pp2=$B/pp2 --bin pp4=$B/pp4 --rows 4096,1024 --rounds 2 --budget $(( TOTAL - $(el) - res - 100 )) > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
for f in $R/ab/*.txt; do echo "$(basename $f .txt): $(grep -h 'pre-pass alone' $f | sed 's/.*pre-pass alone \([0-9.]*\) us.*/\1/' | tr '\n' ' ')"; done | sort -t- -k2 > $R/prepass-alone.txt; cat $R/prepass-alone.txt
python3 tools/bench-compare $R/ab --base head > $R/ab-compare.txt 2>&1; head -30 $R/ab-compare.txt
tools/sm90-ab $R/ab2 --bin head=$B/head --bin pp4=$B/pp4 --rows 16,128,64 --rounds 3 --budget $(( TOTAL - $(el) - res )) > $R/ab2.txt 2>&1; echo "== ab2 rc $? [$(el) s]"
python3 tools/bench-compare $R/ab2 --base head > $R/ab2-compare.txt 2>&1; head -30 $R/ab2-compare.txt
if grep -q H200 $R/device.txt && [ $trc = 0 ]; then
  T=$R/table; mkdir -p $T
  row() { grep -E ' sm90 ' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2 "|" $NF}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//;s/ sm90 //;s/ x cuBLAS-bf16//' | tr -s ' ' | tr '\n' ';'; }
  for x in 1 2 3; do for m in 16 128 4096 32 64; do
    [ $(el) -gt $(( TOTAL - 30 )) ] && break 2
    it=30; [ $m = 4096 ] && it=10
    be=sm90; [ $x = 1 ] && { [ $m = 16 ] || [ $m = 128 ]; } && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
    timeout 60 $B/pp4 bench --no-quantizer --rows $m --iters $it --backend $be --commit pp4 --out $T/pp4-m$m-$x.json > $T/pp4-m$m-$x.txt 2>&1
    echo "pp4-m$m-$x rc $?: $(row $T/pp4-m$m-$x.txt) [$(el) s]"
  done; done
fi
echo "done [$(el) s]"
