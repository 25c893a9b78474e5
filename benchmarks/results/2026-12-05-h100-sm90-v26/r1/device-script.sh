#!/bin/bash
# Device call (2026-12-05, eighteenth session): sm90-v26 r1 on the H200, the GEMM of HEAD 9195099 (its kernel is
# 23bd650's, the carried stripped `desc` binary): validate, the full comparison at M = 16 and 128, sm90 alone at
# M = 32, 64, 4096, two rounds; `nocopy` (the same source built with -DNVFP4_SM90_NO_COPY, sm_90a only: after the first
# ring round the stages are re-armed without copies; output meaningless) at M = 16-128 between the rounds, to tell whether
# the copies pace the small tiles; ncu stall breakdown of qkv and fc2 at M = 16; the GPU suite if time is left.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/desc ] || tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r1; mkdir -p $R; cp dev5.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results1.tgz -C $OUT r1; }
row() { grep -E ' sm90 |cublas-bf16' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//' | tr -s ' ' | tr '\n' ';'; }
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s]"; }
echo "== $(tail -1 $R/device.txt)"
timeout 60 $B/desc validate > $R/validate-default.txt 2>&1; echo "== validate default rc $? $(tail -1 $R/validate-default.txt) $(st)"
timeout 60 $B/desc validate --rows 16 --candidate sm90,sm90-stream --quiet --out /tmp/v16 > $R/val-m16.txt 2>&1; echo "== validate M=16 rc $? $(grep -o "status: [A-Z]*" $R/val-m16.txt | sort | uniq -c | tr '\n' ' ') $(st)"
bench() {  # name M iters backends [binary]
  timeout 120 $B/${5:-desc} bench --no-quantizer --rows $2 --iters $3 --backend $4 --commit 9195099 --out $R/$1.json > $R/$1.txt 2>&1; echo "== $1: $(row $R/$1.txt) $(st)"
}
for x in 1 2; do
  if [ $x = 1 ]; then be=sm90,sm90-stream,comfy-hopper,cublas-fp8; else be=sm90; fi
  bench m16-$x 16 30 $be; bench m32-$x 32 30 sm90; bench m64-$x 64 30 sm90; bench m128-$x 128 30 $be; bench m4096-$x 4096 10 sm90
  pack
  if [ $x = 1 ]; then for m in 16 32 64 128; do bench nocopy-m$m $m 30 sm90 nocopy; done; pack; fi
done
if command -v ncu >/dev/null; then
  for sh in attn_qkv_proj mlp_fc2; do
    timeout 150 ncu --clock-control none --set full --import-source yes -k regex:sm90_gemm_nvfp4 -c 1 -f -o /tmp/ncu-$sh \
      $B/desc bench --no-quantizer --rows 16 --shapes $sh --iters 1 --warmup 0 --backend sm90 > $R/ncu-run-$sh.txt 2>&1
    ncu --import /tmp/ncu-$sh.ncu-rep --page details > $R/ncu-m16-$sh.txt 2>&1
    ncu --import /tmp/ncu-$sh.ncu-rep --page source --csv --print-source sass > /tmp/src.csv 2>/dev/null
    ncu --import /tmp/ncu-$sh.ncu-rep --page raw --csv > /tmp/raw.csv 2>/dev/null
    python3 tools/ncu-stalls /tmp/raw.csv /tmp/src.csv >> $R/ncu-m16-$sh.txt 2>&1
    echo "== ncu $sh $(st)"; grep -E "^    (Duration|Issue Slots Busy|Warp Cycles Per Issued|DRAM Throughput)" $R/ncu-m16-$sh.txt | tr -s ' ' | tr '\n' ';'; echo
    grep -A8 "== stall reasons" $R/ncu-m16-$sh.txt
  done
  pack
fi
if [ $(( $(date +%s) - t0 )) -lt 380 ]; then
  timeout 200 $B/desc_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:DeviceApi.*' > $R/suite.txt 2>&1; echo "== suite rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/suite.txt | tr '\n' ' ') $(st)"
  grep -E 'FAILED|Failure' $R/suite.txt | head; pack
fi
echo "done $(st)"
