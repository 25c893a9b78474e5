#!/usr/bin/env bash
# one-off device call (not committed): sm90-v14 r7: the 32x1x1x1x4 failure (base 1e08936 too): which outputs differ, which shapes and configurations
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
run() {  # cfg label args...
  local cfg=$1 lab=$2; shift 2
  NVFP4_SM90_HELPERS=0 NVFP4_SM90_CONFIG=$cfg timeout 20 build/carry/base validate --candidate sm90 --quiet --out $R/v-$lab "$@" >$R/$lab.txt 2>&1
  echo "$lab: $cfg $* exit $? $(grep -E '^status' $R/$lab.txt | cut -c1-30)"
}
run 32x1x1x1x4 out16 --linear out --rows 16
run 32x1x1x1x4 out32 --linear out --rows 32
run 32x1x1x1x4 out1 --linear out --rows 1
run 64x1x1x1x4 out16-64 --linear out --rows 16
run 64x1x1x1x3 out16-64x3 --linear out --rows 16
run 32x1x1x1x4 k448 --shapes a:5376:448,b:5376:896,c:5376:1792,d:5376:3584,e:64:7168,f:640:7168 --rows 16
run 32x1x1x1x3 k448x3 --shapes a:5376:448,b:5376:896,c:5376:1792,d:5376:3584,e:64:7168,f:640:7168 --rows 16
rm -rf $R/v-*/*.bin 2>/dev/null; find $R -size +2M -delete
tar -czf $OUT/results.tgz -C $OUT r
