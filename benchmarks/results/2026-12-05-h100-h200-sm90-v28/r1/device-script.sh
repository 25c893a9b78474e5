#!/bin/bash
# Device call (2026-12-05, twentieth session): sm90-v28 r1. The one-chain loop's order, five measurement builds against
# `cur` (HEAD e11ace4's kernel): la = the next stage's ready wait and weight words loaded before the MMA wait;
# la2 = la with the codes' fp16 bytes made before the wait too (only the scale multiply after it); er = a chunk's stage
# released right after its verdict holds; lae, la2e = both. Round 1: every binary in alternation, every linear at
# M = 16, 32, 64, 128, 4096; validate of every variant at M = 16 and 333; round 2 at M = 16, 128, 4096.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/la ] || tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r1; mkdir -p $R; cp dev17.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results1.tgz -C $OUT r1; }
row() { grep -E ' sm90 ' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//;s/ sm90 //' | tr -s ' ' | tr '\n' ';'; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
V="cur la la2 er lae la2e"
bench() {  # name M iters binary
  [ $(el) -gt 545 ] && return
  timeout 60 $B/$4 bench --no-quantizer --rows $2 --iters $3 --backend sm90 --commit $4 --out $R/$1.json > $R/$1.txt 2>&1; echo "$1: $(row $R/$1.txt) [$(el) s]"
}
for m in 16 4096 128 32 64; do
  it=30; [ $m = 4096 ] && it=10
  for b in $V; do bench $b-m$m-1 $m $it $b; done
  pack
done
for b in la la2 er lae la2e; do
  for m in 16 333; do timeout 40 $B/$b validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/dv$b$m > $R/$b-val-m$m.txt 2>&1; echo "== $b validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/$b-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
done
pack
for m in 16 4096 128; do
  it=30; [ $m = 4096 ] && it=10
  for b in la2e lae er la2 la cur; do bench $b-m$m-2 $m $it $b; done
  pack
done
echo "done [$(el) s]"
