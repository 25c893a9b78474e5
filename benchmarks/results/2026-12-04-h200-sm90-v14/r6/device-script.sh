#!/usr/bin/env bash
# one-off device call (not committed): sm90-v14 r6: is the 32x1x1x1x4 failure the ring's margin (stages - KS)? base (1e08936) and new without helpers, ring caps
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
run() {  # bin cfg maxstages label
  NVFP4_SM90_HELPERS=0 NVFP4_SM90_MAX_STAGES=$3 NVFP4_SM90_CONFIG=$2 timeout 20 build/carry/$1 validate --linear out --rows 16 --candidate sm90 --quiet --out /tmp/v-$4 >$R/$4.txt 2>&1
  echo "$4: $1 $2 cap $3 exit $? $(grep -E '^status' $R/$4.txt | cut -c1-30)"
}
run base 32x1x1x1x4 16 base-32x4
run base 32x1x1x1x4 16 base-32x4-b
run new 32x1x1x1x4 16 new-32x4
run base 32x1x1x1x4 6 base-32x4-s6
run base 16x1x1x1x4 6 base-16x4-s6
run base 16x1x1x1x4 5 base-16x4-s5
run base 16x1x1x1x3 5 base-16x3-s5
run base 16x1x1x1x3 4 base-16x3-s4
run base 32x1x1x1x3 5 base-32x3-s5
run base 32x1x1x1x2 4 base-32x2-s4
run base 32x1x1x1x2 3 base-32x2-s3
run base 16x1x1x1x2 4 base-16x2-s4
run base 64x1x1x1x2 4 base-64x2-s4
run base 16x1x1x1x4 16 base-16x4
run base 16x1x1x1x3 16 base-16x3
tar -czf $OUT/results.tgz -C $OUT r
