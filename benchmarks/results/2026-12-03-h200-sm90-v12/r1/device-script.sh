#!/usr/bin/env bash
# one-off device call (not committed): sm90-v12 r1: verdict lanes read tile records from global memory
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
B=build/carry/new; O=build/carry/old
mkdir -p build/h/tests; cp build/carry/tests build/h/tests/nvfp4_tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/nvidia-smi.txt
timeout 300 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:-Gpu.SplitKContractsBitIdenticalToOracle' >$R/gpu-tests.txt 2>&1; echo "tests exit $?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure" $R/gpu-tests.txt | tail -8
for cfg in 16x1x1x1x4 32x1x1x1x4 64x1x1x1x3 64x1x1x1x2; do
  NVFP4_SM90_CONFIG=$cfg timeout 100 $B validate --shapes odd:1000:1088,san:200:1000 --rows 333 --candidate sm90,sm90-stream --quiet --out /tmp/v-$cfg >$R/smoke-$cfg.txt 2>&1
  echo "smoke $cfg exit $?"; tail -3 $R/smoke-$cfg.txt
done
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tc in racecheck:16x1x1x1x4 racecheck:64x1x1x1x3; do
  tool=${tc%%:*}; cfg=${tc#*:}
  NVFP4_SM90_CONFIG=$cfg timeout 100 $CS --tool $tool --error-exitcode 9 $B validate --shapes san:200:1000 --rows 150 --candidate sm90,sm90-stream --quiet --out /tmp/san >/tmp/san.txt 2>&1
  echo "$tool $cfg: exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt | tail -1)" | tee -a $R/sanitize.txt
done
for m in 16 32; do for bin in old new; do
  X=$O; [ $bin = new ] && X=$B
  $X bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream --commit $bin --out $R/bench-m$m-$bin.json >$R/bench-m$m-$bin.txt 2>&1
  echo "== m$m $bin"; grep -E "sm90" $R/bench-m$m-$bin.txt | grep -v "of which" | cut -c1-110
done; done
$B bench --no-quantizer --rows 16 --iters 30 --backend sm90 --shapes attn_qkv_proj,mlp_fc1 --sm90-config 16x3x1x1,16x4x1x1,16x1x1x1x4,16x1x1x1x3 --commit new --out $R/bench-m16-ks.json >$R/bench-m16-ks.txt 2>&1
echo "== m16 ks"; grep -E "sm90|cuBLAS" $R/bench-m16-ks.txt | grep -v "of which" | cut -c1-110
for bin in old new; do
  X=$O; cf=""; [ $bin = new ] && { X=$B; cf="--sm90-config 64x1x2x1,128x3x1x2,64x1x1x1x2,64x1x1x1x3,32x1x1x1x4,32x1x1x1x3"; }
  $X bench --no-quantizer --rows 128 --iters 30 --backend sm90 $cf --commit $bin --out $R/bench-m128-$bin.json >$R/bench-m128-$bin.txt 2>&1
  echo "== m128 $bin"; grep -E "sm90|cuBLAS" $R/bench-m128-$bin.txt | grep -v "of which" | cut -c1-110
done
$B bench --no-quantizer --rows 32 --iters 30 --backend sm90 --shapes qkv,fc1 --sm90-config 32x2x1x1,32x1x1x1x4,32x1x1x1x2 --commit new --out $R/bench-m32-ks.json >$R/bench-m32-ks.txt 2>&1
echo "== m32 ks"; grep -E "sm90|cuBLAS" $R/bench-m32-ks.txt | grep -v "of which" | cut -c1-110
$B bench --no-quantizer --rows 64 --iters 30 --backend sm90 --sm90-config 64x1x1x1x2,64x1x1x1x3,32x1x1x1x4 --commit new --out $R/bench-m64-ks.json >$R/bench-m64-ks.txt 2>&1
echo "== m64 ks"; grep -E "sm90|cuBLAS" $R/bench-m64-ks.txt | grep -v "of which" | cut -c1-110
$B bench --no-quantizer --rows 64 --iters 30 --backend sm90 --commit new --out $R/bench-m64.json >$R/bench-m64.txt 2>&1
echo "== m64 launcher"; grep -E "sm90|cuBLAS" $R/bench-m64.txt | grep -v "of which" | cut -c1-110
for st in 16 32 48; do
  NVFP4_SM90_MAX_STAGES=$st $B bench --no-quantizer --rows 16 --iters 30 --backend sm90 --shapes out,fc2 --sm90-config 16x1x1x1x4 --commit new-st$st --out $R/bench-m16-st$st.json >$R/bench-m16-st$st.txt 2>&1
  echo "== m16 stages $st"; grep -E "sm90" $R/bench-m16-st$st.txt | grep -v "of which" | cut -c1-110
done
if [ -x build/carry/trace ]; then
  for tc in 16:out:16x1x1x1x4 16:fc2:16x1x1x1x4 128:out:64x1x1x1x3 128:out:32x1x1x1x4; do
    IFS=: read m sh cfg <<< "$tc"
    NVFP4_SM90_TRACE_OUT=$R/trace-m$m-$sh-$cfg.txt build/carry/trace bench --no-quantizer --rows $m --shapes $sh --backend sm90 --iters 3 --warmup 1 --sm90-config $cfg >/dev/null 2>&1
    echo "trace $tc: $(wc -l < $R/trace-m$m-$sh-$cfg.txt) lines"
  done
fi
tar -czf $OUT/results.tgz -C $OUT r
