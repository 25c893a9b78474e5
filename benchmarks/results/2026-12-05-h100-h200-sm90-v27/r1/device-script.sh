#!/bin/bash
# Device call (2026-12-05, nineteenth session): sm90-v27 r1. `mult` = this tree (the weight block stores the decode's
# scale multipliers, 2608-byte blocks), `head` = 4f53f54 (2352-byte blocks, multipliers derived per chunk): mult's GPU
# suite, validate at M = 16/64/128/333 and default, the 100-run check in two processes; then both binaries timed in
# alternation in one session, sm90 at M = 16, 32, 64, 128, 4096, two rounds (round 1 of mult with every baseline).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/mult ] || tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r1; mkdir -p $R; cp dev11.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results1.tgz -C $OUT r1; }
row() { grep -E ' sm90 |cublas-bf16' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2 "|" $6}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//' | tr -s ' ' | tr '\n' ';'; }
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s]"; }
echo "== $(tail -1 $R/device.txt)"
timeout 240 $B/mult_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:DeviceApi.*' > $R/mult-suite.txt 2>&1; echo "== suite rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/mult-suite.txt | tr '\n' ' ') $(st)"
grep -E 'FAILED|Failure' $R/mult-suite.txt | head; pack
timeout 60 $B/mult validate > $R/mult-validate-default.txt 2>&1; echo "== validate default rc $? $(tail -1 $R/mult-validate-default.txt) $(st)"
for m in 16 64 128 333; do timeout 60 $B/mult validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/dv$m > $R/mult-val-m$m.txt 2>&1; echo "== validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/mult-val-m$m.txt | sort | uniq -c | tr '\n' ' ')"; done
rm -f $R/mult-repeat-hashes.txt
for run in 1 2; do NVFP4_REPEAT_HASH_FILE=$R/mult-repeat-hashes.txt timeout 120 $B/mult_tests --gtest_filter=Gpu.EveryBackendGivesIdenticalBitsOnEveryRun:Gpu.Sm90HundredRunsBitIdentical > /tmp/rep.txt 2>&1; echo "== repeat $run rc $? $(grep -E '^\[  (PASSED|FAILED)' /tmp/rep.txt) $(st)"; done
pack
bench() {  # name M iters backends binary commit
  timeout 120 $B/$5 bench --no-quantizer --rows $2 --iters $3 --backend $4 --commit $6 --out $R/$1.json > $R/$1.txt 2>&1; echo "== $1: $(row $R/$1.txt) $(st)"
}
for x in 1 2; do
  for m in 16 32 64 128 4096; do
    it=30; [ $m = 4096 ] && it=10
    be=sm90; [ $x = 1 ] && { [ $m = 16 ] || [ $m = 128 ]; } && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
    bench head-m$m-$x $m $it sm90 head 4f53f54; bench mult-m$m-$x $m $it $be mult e838218
  done
  pack
done
echo "done $(st)"
