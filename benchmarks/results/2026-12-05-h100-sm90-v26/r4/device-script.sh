#!/bin/bash
# Device call (2026-12-05, eighteenth session), for an H200: sm90-v26 r4 = r3's stage sweep (dev7.sh) on this card,
# then the refresh of HEAD's numbers (`desc`, the kernel of 23bd650 = 9195099): the full comparison at M = 16 and 128,
# sm90 alone at M = 32, 64, 4096, two rounds; validate at M = 16.
set -u
bash dev7.sh
B=build/carry; R=$OUT/r4; mkdir -p $R; cp dev8.sh $R/device-script.sh; cp $OUT/r3/device.txt $R/
pack() { tar -czf $OUT/results4.tgz -C $OUT r4; }
row() { grep -E ' sm90 |cublas-bf16' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//' | tr -s ' ' | tr '\n' ';'; }
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s]"; }
timeout 60 $B/desc validate --rows 16 --candidate sm90,sm90-stream --quiet --out /tmp/v16 > $R/val-m16.txt 2>&1; echo "== validate M=16 rc $? $(grep -o "status: [A-Z]*" $R/val-m16.txt | sort | uniq -c | tr '\n' ' ')"
bench() {  # name M iters backends
  timeout 120 $B/desc bench --no-quantizer --rows $2 --iters $3 --backend $4 --commit 9195099 --out $R/$1.json > $R/$1.txt 2>&1; echo "== $1: $(row $R/$1.txt) $(st)"
}
for x in 1 2; do
  if [ $x = 1 ]; then be=sm90,sm90-stream,comfy-hopper,cublas-fp8; else be=sm90; fi
  bench m16-$x 16 30 $be; bench m32-$x 32 30 sm90; bench m64-$x 64 30 sm90; bench m128-$x 128 30 $be; bench m4096-$x 4096 10 sm90
  pack
done
echo "done $(st)"
