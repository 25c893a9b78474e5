#!/bin/bash
# sm90-v50 (prepared 2026-12-07): fin = HEAD's build; ga = HEAD with -DNVFP4_SM90_PREP_GRID_AMAX=1 on sm90_prep_a.cu:
# a small activation's amax inside its streaming pre-pass (one cooperative launch, a grid-wide barrier)
# instead of the amax pieces' grid and a programmatic dependent launch. ga's bits (Gpu.*, validate
# sm90-stream at M = 1, 16, 77, 128, 333 and the default, memcheck of the amax test), then fin / ga
# alternated with sm90-stream at M = 16, 64, 128, 256.
set -u; TOTAL=${1:-560}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/ga ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; R=$OUT/v50; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/v50.tgz -C $OUT v50; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== v50 $(tail -1 $R/device.txt)"
timeout 150 $B/ga_tests --gtest_filter='Gpu.*' > $R/ga-tests.txt 2>&1
echo "== ga Gpu.* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/ga-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' -A3 $R/ga-tests.txt | head -12
for m in 1 16 77 128 333; do
  (cd build/h && timeout 60 $B/ga validate --rows $m --candidate sm90-stream --out /tmp/vga$m > $R/ga-validate-$m.txt 2>&1; echo "rc $?" >> $R/ga-validate-$m.txt)
  echo "== ga validate sm90-stream M=$m $(tail -1 $R/ga-validate-$m.txt) $(grep -o 'status: [A-Z]*' $R/ga-validate-$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
done
(cd build/h && timeout 90 $B/ga validate --out /tmp/vga > $R/ga-validate-default.txt 2>&1; echo "rc $?" >> $R/ga-validate-default.txt)
echo "== ga validate (default) $(tail -1 $R/ga-validate-default.txt) $(grep -o 'status: [A-Z]*' $R/ga-validate-default.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $B/ga_tests --gtest_filter='Gpu.AmaxPartialsEqualTheSingleWordAmax' > $R/ga-memcheck.txt 2>&1
echo "== ga memcheck rc $? $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' $R/ga-memcheck.txt | tr '\n' ' ') [$(el) s]"; pack
A=$R/ab; mkdir -p $A
line() { grep -E 'sm90|pre-pass' $1 | grep -v '^#' | sed -E 's/ +/ /g' | awk -F'|' '{print $1 "|" $2 "|" $NF}' | tr '\n' ';'; }
for x in 1 2 3 4; do
  for m in 16 128 64 256; do
    bins="fin ga"; [ $((x % 2)) = 0 ] && bins="ga fin"
    for b in $bins; do
      [ $(el) -gt $(( TOTAL - 25 )) ] && break 3
      timeout 40 $B/$b bench --no-quantizer --rows $m --iters 30 --backend sm90-stream --commit $b --out $A/$b-m$m-$x.json > $A/$b-m$m-$x.txt 2>&1
      echo "$b M=$m round $x rc $?: $(line $A/$b-m$m-$x.txt | cut -c1-300) [$(el) s]"
    done
  done; pack
done
pack; echo "done [$(el) s]"
