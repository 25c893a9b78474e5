#!/bin/bash
# Device call (2026-12-07, thirty-ninth session): sm90-v45 r4. bench/sm90_hgmma_probe with the chain:h / :i / :f
# shapes (32 HMUL2, LOP3 + IADD3 or FMUL per chunk, `<` under the MMAs, `>` after the wait and adds): do the issuing
# warp's ALU instructions slow its register-operand MMAs, and does the fp16 pipe differ?
set -u
[ -x build/carry118/probe ] || tar -xJf build/carry118.tar.xz -C build
R=$OUT/r4; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s)
echo "== $(tail -1 $R/device.txt)"
timeout 150 build/carry118/probe --out $R/probe.json > $R/probe.txt 2>&1; echo "== probe rc $? [$(( $(date +%s) - t0 )) s]"
grep -E 'chain' $R/probe.txt | grep -E '^(16|64) ' 
tar -czf $OUT/results4.tgz -C $OUT r4
