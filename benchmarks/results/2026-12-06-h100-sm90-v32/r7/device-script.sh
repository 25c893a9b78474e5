#!/bin/bash
# Device call (2026-12-06, twenty-sixth session): sm90-v32 r7. Binary head = the session's final kernel (92793ac's
# machine code): the four linears at M = 192, 256, 512, 1024 and 2048 (the README's 128-4096 table), two rounds.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
[ -x build/carry/head ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; R=$OUT/r7; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
tools/sm90-ab $R --bin head=$B/head --rows 192,256,512,1024,2048 --rounds 2 --budget 170 --timeout 40; echo "== r7 rc $?"
tar -czf $OUT/results.tgz -C $OUT r7
