#!/usr/bin/env bash
# one-off device call (not committed): sm90-v18 r1: per-CTA end times and per-trip durations (-DNVFP4_SM90_CTA_STATS) at M = 4096, to see what the fallback's trips cost through the static tile schedule
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for act in outliers normal; do for s in qkv out fc1 fc2; do
  [ $act = normal ] && [ $s != qkv ] && continue
  NVFP4_SM90_CTA_STATS_OUT=$R/stats-$act-$s.txt timeout 120 build/carry/stats bench --no-quantizer --rows 4096 --shapes $s --iters 3 --warmup 1 --backend sm90 --activations $act --commit stats --out $R/b-$act-$s.json > $R/b-$act-$s.txt 2>&1
  echo "== $act $s exit $?"; head -1 $R/stats-$act-$s.txt; head -1 $R/stats-$act-$s.txt.trips
  python3 - $R/stats-$act-$s.txt <<'PY'
import sys
rows=[l.split() for l in open(sys.argv[1]) if not l.startswith('#')]
ends=sorted(int(r[2]) for r in rows); n=len(ends)
print('end us: min %.1f med %.1f p90 %.1f max %.1f' % (ends[0]/1e3, ends[n//2]/1e3, ends[int(n*.9)]/1e3, ends[-1]/1e3))
trips=[l.split() for l in open(sys.argv[1]+'.trips') if not l.startswith('#')]
if trips:
  d=sorted(int(t[6]) for t in trips); m=len(d)
  print('trips %d: dur us min %.1f med %.1f max %.1f sum %.1f' % (m, d[0]/1e3, d[m//2]/1e3, d[-1]/1e3, sum(d)/1e3))
  per={}
  for t in trips: per[t[0]]=per.get(t[0],0)+int(t[6])
  worst=sorted(per.items(), key=lambda x:-x[1])[:5]
  endof={r[0]:int(r[2]) for r in rows}
  print('worst ctas (cta, trip us, end us):', [(c, round(v/1e3,1), round(endof[c]/1e3,1)) for c,v in worst])
  last=sorted(rows, key=lambda r:-int(r[2]))[:5]
  print('last ctas (cta, end us, trip us):', [(r[0], round(int(r[2])/1e3,1), round(per.get(r[0],0)/1e3,1)) for r in last])
PY
done; done
tar -czf $OUT/results.tgz -C $OUT r
