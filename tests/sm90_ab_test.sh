#!/usr/bin/env bash
# ctest tools.sm90-ab: tools/sm90-ab with a stand-in for nvfp4 (it prints one bench row and writes
# its --out): the reports' names (NAME-mM-R, what tools/bench-compare reads), the order of the runs
# (every binary in turn per M and round, reversed in even rounds), the iterations at large M, a
# failed run's exit 1, the budget's exit 3 and one-line refusals of bad arguments (exit 2). No GPU.
tool=${1:?usage: sm90_ab_test.sh tools/sm90-ab}
. "$(dirname "$0")/tool_test_common.sh"
cat >"$d/bench" <<'B'
#!/bin/sh
echo "$*" >> "$(dirname "$0")/calls"
echo "attn_out_proj 16x5376x7168         sm90             |       25.2 us |    49.03 TFLOP/s |    873.2 GB/s |  0.934 x cuBLAS-bf16"
while [ $# -gt 0 ]; do [ "$1" = "--out" ] && echo '{}' > "$2"; shift; done
B
printf '#!/bin/sh\nexit 3\n' >"$d/broken"
chmod +x "$d/bench" "$d/broken"
out=$("$tool" "$d/r" --bin a=$d/bench --bin b.2=$d/bench --rows 16,4096 --rounds 2 --iters 7 --iters-large 3 --shapes attn_out_proj) ||
  fail "two binaries, two rounds: exit $?"
echo "$out"
want="a-m16-1 a-m16-2 a-m4096-1 a-m4096-2 b.2-m16-1 b.2-m16-2 b.2-m4096-1 b.2-m4096-2"
got=$(cd "$d/r" && ls *.json | sed 's/\.json$//' | tr '\n' ' ' | sed 's/ $//')
[ "$got" = "$want" ] || fail "reports '$got', expected '$want'"
order=$(echo "$out" | awk '{print $1 $2 $4}' | tr '\n' ' ')
[ "$order" = "aM=161 b.2M=161 aM=40961 b.2M=40961 b.2M=162 aM=162 b.2M=40962 aM=40962 " ] || fail "run order '$order'"
grep -q -- "--rows 4096 --iters 3 --backend sm90 --commit b.2 --shapes attn_out_proj" "$d/calls" || fail "M = 4096 not run with --iters-large 3"
grep -q -- "--rows 16 --iters 7 " "$d/calls" || fail "M = 16 not run with --iters 7"
echo "$out" | grep -q "out 16x5376x7168 | 25.2 us" || fail "no bench row in the run lines"
"$tool" "$d/f" --bin x=$d/broken --rows 16 --rounds 1 >/dev/null; rc=$?
[ $rc -eq 1 ] || fail "a failing run: exit $rc, expected 1"
printf '#!/bin/sh\nsleep 2\n' >"$d/slow"; chmod +x "$d/slow"
out=$("$tool" "$d/g" --bin a=$d/slow --rows 16 --rounds 3 --budget 1 --timeout 5); rc=$?
[ $rc -eq 3 ] && [ "$(echo "$out" | grep -c '^a M=16')" = 1 ] || fail "--budget 1 with a 2 s run: exit $rc, expected 3 after one run:\n$out"
expect_refusals "$tool" "" "$d/h" "$d/h --bin a" "$d/h --bin a=$d/nothing" "$d/h --bin a=$d/bench --rows 16,x" \
  "$d/h --bin a=$d/bench --rounds 0" "$d/h --bin a/b=$d/bench" "$d/h --bin a=$d/bench --frob 1"
echo "sm90-ab: ok"
