#!/usr/bin/env bash
# one-off device call (not committed): sm90-v18 r3: with r2's kernel (new): per-CTA ends and trips at M = 128 and 64 (CTA stats build); every 128-token configuration at M = 4096 (the last round's share: out and fc2 have 1344 tiles of 128x2x1x1 for 132 SMs)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
summ() { python3 - "$1" <<'PY'
import sys
rows=[l.split() for l in open(sys.argv[1]) if not l.startswith('#')]
ends=sorted(int(r[2]) for r in rows); n=len(ends)
trips=[l.split() for l in open(sys.argv[1]+'.trips') if not l.startswith('#')]
d=sorted(int(t[6]) for t in trips) or [0]; m=len(trips)
per={}
for t in trips: per[t[0]]=per.get(t[0],0)+int(t[6])
last=sorted(rows, key=lambda r:-int(r[2]))[:4]
print('end us: min %.1f med %.1f max %.1f | trips %d dur us med %.1f max %.1f | last ctas (cta,end,trip us,tiles) %s' % (ends[0]/1e3, ends[n//2]/1e3, ends[-1]/1e3, m, d[len(d)//2]/1e3, d[-1]/1e3, [(r[0], round(int(r[2])/1e3,1), round(per.get(r[0],0)/1e3,1), r[3]) for r in last]))
PY
}
for m in 128 64; do for s in qkv out fc1 fc2; do
  NVFP4_SM90_CTA_STATS_OUT=$R/stats-m$m-$s.txt timeout 60 build/carry/newstats bench --no-quantizer --rows $m --shapes $s --iters 3 --warmup 1 --backend sm90 --commit newstats --out $R/stats-m$m-$s.json > $R/stats-m$m-$s.out 2>&1
  echo "== stats m$m $s: $(summ $R/stats-m$m-$s.txt)"
done; done
NVFP4_SM90_CTA_STATS_OUT=$R/stats-m4096-fc2-128x3x1x2.txt timeout 60 build/carry/newstats bench --no-quantizer --rows 4096 --shapes fc2 --iters 3 --warmup 1 --backend sm90 --sm90-config 128x3x1x2 --commit newstats --out $R/stats-m4096-fc2-128x3x1x2.json > /dev/null 2>&1
echo "== stats m4096 fc2 128x3x1x2: $(summ $R/stats-m4096-fc2-128x3x1x2.txt)"
timeout 400 build/carry/new bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --sm90-config 128x2x1x1,128x3x1x2,128x1x2x1,256x2x1x2,64x2x1x1,64x3x1x1 --commit new --out $R/m4096-sweep.json > $R/m4096-sweep.txt 2>&1
echo "== m4096 sweep"; grep -E "sm90@" $R/m4096-sweep.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-110
tar -czf $OUT/results.tgz -C $OUT r
