#!/bin/bash
# Device call (2026-12-05, twenty-second session): sm90-v29 r2. Where out and fc2 spend their time at
# M = 33-128 (one warpgroup per CTA, 84 CTAs): cur's tile configurations forced at M = 64 and 128;
# nc (-DNVFP4_SM90_NO_COPY: the ring re-armed without copies after its first round) against cur;
# tr (-DNVFP4_SM90_TRACE) per-chunk stamps of out; then ncu of a warm cur launch of out at M = 64, 128.
# mc (-DNVFP4_SM90_MCAST=1: clusters of two CTAs, each copying half of the A' box into both) first:
# its GPU suite and validate, then cur / mc / nc in alternation at M = 64 and 128.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/nc ] || tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r2; mkdir -p $R; cp dev23.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results2.tgz -C $OUT r2; }
row() { grep -E ' sm90 ' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/attn_//;s/_proj//;s/mlp_//;s/ sm90 //' | tr -s ' ' | tr '\n' ';'; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
bench() {  # name M binary [extra]
  local n=$1 m=$2 b=$3; shift 3
  timeout 90 $B/$b bench --no-quantizer --rows $m --iters 30 --backend sm90 --commit $b --shapes attn_out_proj,mlp_fc2 "$@" --out $R/$n.json > $R/$n.txt 2>&1; echo "$n: $(row $R/$n.txt) [$(el) s]"
}
timeout 30 $B/mc validate --rows 64 --candidate sm90,sm90-stream --quiet --out /tmp/dv64 > $R/mc-val-m64.txt 2>&1; rc=$?; echo "== mc validate M=64 rc $rc $(grep -o "status: [A-Z]*" $R/mc-val-m64.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
BINS="--bin cur=$B/cur --bin nc=$B/nc"
if [ $rc = 0 ]; then
  BINS="--bin cur=$B/cur --bin mc=$B/mc --bin nc=$B/nc"
  timeout 60 $B/mc_tests --gtest_filter='Gpu.Sm90*' > $R/mc-tests.txt 2>&1; echo "== mc tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/mc-tests.txt | tr '\n' ' ') [$(el) s]"
  grep -E '^\[  FAILED' $R/mc-tests.txt | head -5
  for m in 128 16 333; do timeout 30 $B/mc validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/dv$m > $R/mc-val-m$m.txt 2>&1; echo "== mc validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/mc-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
fi
tools/sm90-ab $R/ab $BINS --rows 128,64 --rounds 2 --budget 150 --timeout 60; echo "== ab rc $? [$(el) s]"
pack
C64=16x1x1x1,16x2x1x1,32x1x1x1,32x2x1x1,64x1x1x1,16x1x1x1x2,16x1x1x1x3,16x1x1x1x4,32x1x1x1x2,32x1x1x1x3,64x1x1x1x2,64x1x1x1x3
C128=32x1x1x1,32x2x1x1,64x1x1x1,64x2x1x1,64x1x2x1,128x1x1x1,128x2x1x1,32x1x1x1x2,32x1x1x1x3,64x1x1x1x2,64x1x1x1x3
bench cfg-m64 64 cur --sm90-config $C64
bench cfg-m128 128 cur --sm90-config $C128
pack
for m in 64 128; do
  c=64x1x1x1; [ $m = 128 ] && c=128x1x1x1
  NVFP4_SM90_TRACE_OUT=$R/trace-m$m-out.txt timeout 60 $B/tr bench --no-quantizer --rows $m --iters 3 --warmup 1 --backend sm90 --sm90-config $c --shapes attn_out_proj --commit tr > /dev/null 2>&1; echo "trace M=$m rc $?"
  python3 tools/sm90-trace-summary $R/trace-m$m-out.txt $R/trace-m$m-out.txt.wg > $R/trace-m$m-summary.txt 2>&1; head -30 $R/trace-m$m-summary.txt
done
pack
prof() {  # shape M
  local tag=$1-m$2
  timeout 120 ncu --clock-control none --cache-control none --set full --import-source yes -k regex:sm90_gemm_nvfp4 --launch-skip 10 -c 1 \
    -f -o /tmp/ncu-$tag $B/cur bench --no-quantizer --rows $2 --shapes $1 --iters 5 --warmup 10 --backend sm90 > $R/ncu-run-$tag.txt 2>&1
  ncu --import /tmp/ncu-$tag.ncu-rep --page details > $R/ncu-$tag.txt 2>&1
  ncu --import /tmp/ncu-$tag.ncu-rep --page source --csv --print-source sass > /tmp/src.csv 2>/dev/null
  ncu --import /tmp/ncu-$tag.ncu-rep --page raw --csv > $R/ncu-raw-$tag.csv 2>/dev/null
  python3 tools/ncu-stalls $R/ncu-raw-$tag.csv /tmp/src.csv >> $R/ncu-$tag.txt 2>&1
  gzip -f $R/ncu-raw-$tag.csv
  echo "== $tag [$(el) s]"; grep -E "^    (Duration|Issue Slots Busy|Warp Cycles Per Issued|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Memory Throughput|Executed Ipc Active|Compute \(SM\) Throughput)" $R/ncu-$tag.txt | tr -s ' ' | tr '\n' ';'; echo
  grep -A8 "== stall reasons" $R/ncu-$tag.txt | head -10
  pack
}
if command -v ncu >/dev/null && [ $(el) -lt 380 ]; then prof attn_out_proj 64; fi
if command -v ncu >/dev/null && [ $(el) -lt 450 ]; then prof attn_out_proj 128; fi
echo "done [$(el) s]"
