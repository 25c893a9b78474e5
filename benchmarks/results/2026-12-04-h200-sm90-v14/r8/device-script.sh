#!/usr/bin/env bash
# one-off device call (not committed): sm90-v14 r8: the 32x1x1x1x4 failure: a build whose chunk-sum warpgroups check that the ring stage they waited for holds their stage (stamps by both copy threads)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
run() {  # cfg label args...
  local cfg=$1 lab=$2; shift 2
  NVFP4_SM90_CONFIG=$cfg timeout 20 build/carry/rc validate --candidate sm90 --quiet --out /tmp/v-$lab "$@" >$R/$lab.txt 2>&1
  echo "$lab: $cfg $* exit $? $(grep -E '^status' $R/$lab.txt | cut -c1-30)"; grep -m3 "ring check" $R/$lab.txt
}
run 32x1x1x1x4 a --linear out --rows 16
run 32x1x1x1x4 b --linear out,fc2 --rows 16
run 32x1x1x1x4 c --linear out --rows 32
run 16x1x1x1x3 d --linear out,fc2 --rows 16
run 32x1x1x1x3 e --linear out,fc2 --rows 16
run 32x1x1x1x2 f --linear out,fc2 --rows 32
run 16x1x1x1x4 g --linear out,fc2 --rows 16
tar -czf $OUT/results.tgz -C $OUT r
