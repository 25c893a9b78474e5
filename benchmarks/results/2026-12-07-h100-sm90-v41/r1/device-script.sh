#!/bin/bash
# Device call (2026-12-07, thirty-sixth session): the shortest form of dev94.sh for the session's last ~250 s of device
# time: hd / kp / kpn on out and fc2 at M = 16 and 32, two rounds in one process; kpn validate at M = 16, 32.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry83/kp ] || tar -xJf build/carry83.tar.xz -C build
B=$PWD/build/carry83; R=$OUT/r1; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results1.tgz -C $OUT r1; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
tools/sm90-ab $R/ab --bin hd=$B/hd --bin kp=$B/kp --bin kpn=$B/kpn --rows 16,32 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 30 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base hd > $R/ab-compare.txt 2>&1; head -10 $R/ab-compare.txt; pack
for m in 16 32; do timeout 20 $B/kpn validate --rows $m --linear out,fc2 --candidate sm90,sm90-stream --quiet --out /tmp/vkpn$m > $R/kpn-val-m$m.txt 2>&1; echo "== kpn validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/kpn-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
echo "done [$(el) s]"
