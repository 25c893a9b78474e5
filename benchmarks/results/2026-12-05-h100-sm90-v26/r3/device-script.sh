#!/bin/bash
# Device call (2026-12-05, eighteenth session): sm90-v26 r3. The paired loop (`pipe`, r2: 3-11 % slower than `desc` with
# the six-stage ring) holds three stages at once where the one-chain loop holds one or two: is it the ring's depth?
# `pipe` with NVFP4_SM90_MAX_STAGES = 6, 8, 10, 12 against `desc` (default six) at M = 16 and 32, two rounds.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/pipe ] || tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r3; mkdir -p $R; cp dev7.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results3.tgz -C $OUT r3; }
row() { grep -E ' sm90|cublas-bf16' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//' | tr -s ' ' | tr '\n' ';'; }
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s]"; }
echo "== $(tail -1 $R/device.txt)"
bench() {  # name binary M stages [extra]
  local n=$1 b=$2 m=$3 s=$4; shift 4
  NVFP4_SM90_MAX_STAGES=$s timeout 100 $B/$b bench --no-quantizer --rows $m --iters 30 --backend sm90 --commit $b-s$s "$@" --out $R/$n.json > $R/$n.txt 2>&1; echo "== $n: $(row $R/$n.txt) $(st)"
}
for x in 1 2; do
  for m in 16 32; do
    bench m$m-desc-s6-$x desc $m 6 --shapes attn_qkv_proj,mlp_fc1
    for s in 6 8 10 12; do bench m$m-pipe-s$s-$x pipe $m $s --shapes attn_qkv_proj,mlp_fc1; done
  done
  bench fc1-m16-cfg-desc-$x desc 16 6 --shapes mlp_fc1 --sm90-config 16x2x1x1,16x3x1x1
  for s in 8 12; do bench fc1-m16-cfg-pipe-s$s-$x pipe 16 $s --shapes mlp_fc1 --sm90-config 16x2x1x1,16x3x1x1; done
  pack
done
echo "done $(st)"
