#!/bin/bash
# Device call (2026-12-06, twenty-eighth session): sm90-v34 r2. hd = the tree's build at 05af970 (CLI). r2: 128x2x1x1
# (its partial last round split into one-row-block units) against the launcher's pick where a round-cost rule that
# counts a split last round as 3/4 of a round would change it: qkv at M = 72, 80, 96 (96x2x1x1), 100, 112 (128x3x1x2),
# 400, 928 (96x2x1x1); fc1 at 320, 1040; out and fc2 at 1984 (96x2x1x1). Both configurations in one process, the list
# order reversed in the second pass.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
[ -x build/carry6/hd ] || tar -xJf build/carry6.tar.xz -C build
B=$PWD/build/carry6; R=$OUT/r2; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
b() {  # name rows shapes configs iters
  timeout 90 $B/hd bench --no-quantizer --backend sm90 --rows $2 --shapes $3 --sm90-config $4 --iters ${5:-40} \
    --commit 05af970 --out $R/$1.json > $R/$1.txt 2>&1
  echo "-- $1 rc $? [$(el) s]"; grep -F ' sm90@' $R/$1.txt | grep -v pre-pass | awk -F'|' '{print $1 "|" $2 "|" $NF}'
}
rev() { echo $1 | tr , '\n' | tac | paste -sd,; }
for p in 1 2; do
  Q=96x2x1x1,128x2x1x1; T=128x3x1x2,128x2x1x1
  if [ $p = 2 ]; then Q=$(rev $Q); T=$(rev $T); fi
  for m in 72 80 96; do b qkv$m-$p $m attn_qkv_proj $Q 60; done
  for m in 100 112; do b qkv$m-$p $m attn_qkv_proj $T 60; done
  b qkv400-$p 400 attn_qkv_proj $Q
  b qkv928-$p 928 attn_qkv_proj $Q 20
  b fc1-320-$p 320 mlp_fc1 $Q
  b fc1-1040-$p 1040 mlp_fc1 $Q 20
  b m1984-$p 1984 attn_out_proj,mlp_fc2 $Q 15
done
tar -czf $OUT/results.tgz -C $OUT r2
echo "done [$(el) s]"
