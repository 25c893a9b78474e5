#!/bin/bash
# Device call (2026-12-07, thirty-ninth session): sm90-v45 r3. fin (HEAD's kernel) and pd (r1's two-buffer loop)
# in turn on attn_out_proj and attn_qkv_proj at M = 128 and 4096, three rounds, with the SM clock and the board power
# logged every 20 ms (nvidia-smi): is pd's 8-14 % (r1) a lower clock, or the kernel's own pace (r2's CTA-0 traces
# read pd's chunk no slower)?
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
[ -x build/carry109/fin ] || tar -xJf build/carry109.tar.xz -C build
[ -x build/carry115/pd4 ] || tar -xJf build/carry115.tar.xz -C build
R=$OUT/r3; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results3.tgz -C $OUT r3; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader -lms 20 > $R/smi.csv 2>&1 &
smi=$!
sleep 1
for r in 1 2 3; do
  for m in 128 4096; do
    it=30; [ $m = 4096 ] && it=10
    bs="fin pd"; [ $r = 2 ] && bs="pd fin"
    for b in $bs; do
      p=build/carry109/fin; [ $b = pd ] && p=build/carry115/pd
      a=$(date +%s.%N)
      timeout 60 $p bench --no-quantizer --rows $m --iters $it --backend sm90 --shapes attn_out_proj,attn_qkv_proj --commit $b --out $R/$b-m$m-$r.json > $R/$b-m$m-$r.txt 2>&1
      echo "$b $m $r $a $(date +%s.%N)" >> $R/marks.txt
      echo "$b M=$m r$r: $(grep -E ' sm90 ' $R/$b-m$m-$r.txt | grep -v pre-pass | awk -F'|' '{print $1 $2 $NF}' | tr -s ' ' | tr '\n' ';') [$(el) s]"
    done
  done
done
kill $smi; sleep 0.2; pack
python3 - $R <<'PY'
import sys, datetime, collections
R = sys.argv[1]
marks = [l.split() for l in open(f"{R}/marks.txt")]
rows = []
for l in open(f"{R}/smi.csv"):
    f = [x.strip() for x in l.split(",")]
    try:
        t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        rows.append((t, float(f[1].split()[0]), float(f[3].split()[0]), f[4]))
    except Exception:
        pass
for b, m, r, a, e in marks:
    a, e = float(a), float(e)
    s = [x for x in rows if a <= x[0] <= e]
    if not s: print(b, m, r, "no samples"); continue
    clk = sorted(x[1] for x in s); pw = sorted(x[2] for x in s)
    thr = collections.Counter(x[3] for x in s).most_common(2)
    print(f"{b} M={m} r{r}: {len(s)} samples, SM clock median {clk[len(clk)//2]:.0f} min {clk[0]:.0f} MHz, power median {pw[len(pw)//2]:.0f} max {pw[-1]:.0f} W, temperature {thr}")
PY
echo "done [$(el) s]"
