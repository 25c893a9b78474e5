#!/usr/bin/env bash
# one-off device call (not committed): the data-path probe with padded weight row pitches
set -u
R=$OUT/r; mkdir -p $R
P=build/h/bin/nvfp4_sm120_stream_probe
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/nvidia-smi.txt
export PROBE_ONLY="tma  n64 m0 row128 st9 w8 rd0 sf1,tma  n128 m0 row128 st5 w8 rd0 sf1,tma  n64 m128 row128 st3 w8 rd0 sf1,tma  n128 m128 row128 st2 w8 rd0 sf1,tma  n64 m128 row128 st3 w8 rd2 sf1,tma  n128 m128 row128 st2 w8 rd2 sf1"
PROBE_PITCH_PAD=0 timeout 120 $P 30 > $R/probe-sync-pad0.txt 2>&1
for pad in 0 128 256 512 1024 2048; do
  PROBE_TIMING=queued PROBE_PITCH_PAD=$pad timeout 120 $P 30 > $R/probe-queued-pad$pad.txt 2>&1
done
for f in $R/probe-*.txt; do echo "== $f"; head -1 $f | cut -c1-200; grep -E "device copy| c(1|2) " $f | awk -F'|' '{printf "%s|%s|%s|%s\n",$1,$2,$4,$6}' ; done
tar -czf $OUT/results.tgz -C $OUT r
