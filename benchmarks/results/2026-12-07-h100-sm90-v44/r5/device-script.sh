#!/bin/bash
# Device call (2026-12-07, thirty-eighth session): sm90-v44 r5. (1) bench/sm90_hgmma_probe.cu of 0b84625: the fragments
# written each chunk as the kernel's decode writes them (one wgmma fence per chain; v6 r5's build had ptxas rebuild them
# between the MMAs), and a chain with A from shared memory (`ss`); three runs. (2) Only on an H200: the README's H200
# table of fin = 036c998's build (66a9c39's kernel), as r4 timed the H100's: validate (default), every linear at
# M = 16, 32, 64, 128, 4096, two rounds, the baselines in round 1 at M = 16 and 128.
set -u; TOTAL=${1:-300}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
R=$OUT/r5; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results5.tgz -C $OUT r5; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
P=$PWD/build/carry110
for x in 1 2 3; do timeout 60 $P/nvfp4_sm90_hgmma_probe --out $R/hgmma-probe-$x.json > $R/hgmma-probe-$x.txt 2>&1; echo "== probe run $x rc $? [$(el) s]"; done
cat $R/hgmma-probe-1.txt; pack
tail -1 $R/device.txt | grep -q H200 || { echo "not an H200: no table"; exit 0; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry109/fin ] || tar -xJf build/carry109.tar.xz -C build
B=$PWD/build/carry109
(cd build/h && timeout 90 $B/fin validate --out /tmp/vdef > $R/validate-default.txt 2>&1; echo "== validate (default) rc $? $(grep -o 'status: [A-Z]*' $R/validate-default.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"); pack
T=$R/table; mkdir -p $T
row() { grep -E ' sm90 ' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2 "|" $NF}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//;s/ sm90 //;s/ x cuBLAS-bf16//' | tr -s ' ' | tr '\n' ';'; }
for x in 1 2; do
  for m in 16 32 64 128 4096; do
    [ $(el) -gt $(( TOTAL - 60 )) ] && break
    it=30; [ $m = 4096 ] && it=10
    be=sm90; [ $x = 1 ] && { [ $m = 16 ] || [ $m = 128 ]; } && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
    timeout 90 $B/fin bench --no-quantizer --rows $m --iters $it --backend $be --commit 66a9c39 --out $T/fin-m$m-$x.json > $T/fin-m$m-$x.txt 2>&1
    echo "fin-m$m-$x rc $?: $(row $T/fin-m$m-$x.txt) [$(el) s]"
  done; pack
done
echo "done [$(el) s]"
