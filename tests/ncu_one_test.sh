#!/usr/bin/env bash
# ctest tools.ncu-one: tools/ncu-one with a stand-in for ncu (it runs the command, writes a report
# and prints fixed pages on --import): the flags it profiles with, the files it keeps, the summary
# (headline metrics, stall reasons by size, SASS lines by samples), --raw, and exit 1 when the
# command fails, no report is written or the limit passes, exit 2 on bad arguments. No GPU.
tool=${1:?usage: ncu_one_test.sh tools/ncu-one}
. "$(dirname "$0")/tool_test_common.sh"
cat >"$d/ncu" <<'N'
#!/bin/bash
# Stand-in for ncu: profiling writes OUT.ncu-rep unless NO_REPORT is set; --import prints a page.
log=$(dirname "$0")/calls
if [ "$1" = --import ]; then
  echo "import $*" >>"$log"
  case "$*" in
    *"--page details"*) printf '%s\n' "  sm90_gemm_nvfp4 (132, 1, 1)x(512, 1, 1)" \
      "    Duration                         us        21.50" \
      "    Compute (SM) Throughput           %        31.20" \
      "    Issue Slots Busy                  %        44.10" \
      "    Registers Per Thread             register/thread             168" \
      "    Block Limit Registers            block            1" ;;
    *"--page raw"*) printf '%s\n' '"ID","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","smsp__average_warps_issue_stalled_wait_per_issue_active.ratio","smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio","dram__bytes.sum"' \
      '"","ratio","ratio","ratio","byte"' '"0","0.50","2.75","1.25","1,024"' ;;
    *"--page source"*) printf '%s\n' '"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed","stall_long_sb","stall_wait"' \
      '"0x10","HGMMA.64x16x16.F32.BF16 R24, gdesc[UR4], RZ","30","100","2","25"' \
      '"0x20","WARPSYNC.ALL","10","100","0","9"' '"0x30","FADD.RZ R1, R2, R3","60","400","50","3"' ;;
  esac
  exit 0
fi
echo "profile $*" >>"$log"
out=
while [ $# -gt 0 ]; do
  case $1 in
    -o) out=$2; shift 2 ;;
    -k | --launch-skip | -c | --set | --clock-control | --cache-control | --import-source) shift 2 ;;
    -f) shift ;;
    *) break ;;
  esac
done
"$@"; rc=$?
[ -n "${NO_REPORT:-}" ] || echo report >"$out.ncu-rep"
exit $rc
N
chmod +x "$d/ncu"
export NCU=$d/ncu

out=$("$tool" "$d/r" m16-out --kernel 'sm90_gemm_nvfp4.*Cfg<16' --skip 6 --raw --source -- sh -c 'echo bench-row; exit 0') ||
  fail "a profiled launch: exit $?"
echo "$out"
grep -q -- "--clock-control none --cache-control none --set full --import-source yes -k regex:sm90_gemm_nvfp4.\*Cfg<16 --launch-skip 6 -c 1" "$d/calls" ||
  fail "profiled with other flags: $(grep profile "$d/calls")"
[ "$(grep -c '^import' "$d/calls")" = 3 ] || fail "expected three pages imported"
grep -q bench-row "$d/r/ncu-run-m16-out.txt" || fail "the command's output is not in ncu-run-TAG.txt"
grep -q "Duration *us *21.50" "$d/r/ncu-m16-out.txt" || fail "no details page in ncu-TAG.txt"
[ -s "$d/r/ncu-raw-m16-out.csv.gz" ] && gzip -dc "$d/r/ncu-raw-m16-out.csv.gz" | grep -q dram__bytes || fail "--raw kept no raw page"
[ -s "$d/r/ncu-source-m16-out.csv.gz" ] && gzip -dc "$d/r/ncu-source-m16-out.csv.gz" | grep -q stall_long_sb || fail "--source kept no source page"
[ -z "$(ls "$d/r" | grep ncu-rep)" ] || fail "the report was left in DIR"
grep -A1 "== SASS lines by 'stall_long_sb' (total 52)" "$d/r/ncu-m16-out.txt" | tail -1 | grep -qE "50 +96.2%  FADD.RZ" ||
  fail "no per-reason lines: $(grep -A2 "stall_long_sb" "$d/r/ncu-m16-out.txt")"
grep -A1 "== SASS lines by 'stall_wait' (total 37)" "$d/r/ncu-m16-out.txt" | tail -1 | grep -q "HGMMA" || fail "per-reason sections not by their totals"
echo "$out" | head -1 | grep -q "^== ncu m16-out: Duration us 21.50;Compute (SM) Throughput % 31.20;Issue Slots Busy % 44.10;Registers Per Thread register/thread 168;$" ||
  fail "summary line: $(echo "$out" | head -1)"
stalls=$(grep -A3 "== stall reasons" "$d/r/ncu-m16-out.txt" | tail -3 | awk '{print $1}' | tr '\n' ' ')
[ "$stalls" = "2.750 1.250 0.500 " ] || fail "stall reasons not largest first: '$stalls'"
echo "$out" | grep -A1 "== SASS lines by stall samples" | tail -1 | grep -qE "60 +60.0%.*FADD.RZ" || fail "SASS lines not by samples"

"$tool" "$d/q" t --quiet --cache all -- true >"$d/q.out" || fail "--quiet: exit $?"
[ ! -s "$d/q.out" ] && [ -s "$d/q/ncu-t.txt" ] || fail "--quiet printed or kept nothing"
grep '^profile' "$d/calls" | tail -1 | grep -q -- "--cache-control all " || fail "--cache all not passed to ncu"
[ ! -e "$d/q/ncu-raw-t.csv.gz" ] && [ ! -e "$d/q/ncu-source-t.csv.gz" ] || fail "raw or source page kept without --raw / --source"

msg=$("$tool" "$d/f" t --quiet -- sh -c 'exit 4' 2>&1); rc=$?
[ $rc -eq 1 ] && [ -s "$d/f/ncu-t.txt" ] && echo "$msg" | grep -q "exited 4" || fail "a failing command: exit $rc, '$msg'"
msg=$(NO_REPORT=1 "$tool" "$d/n" t -- true 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$msg" | grep -q "no report" || fail "no report: exit $rc, '$msg'"
msg=$(NO_REPORT=1 "$tool" "$d/s" t --timeout 1 -- sleep 5 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$msg" | grep -q "past --timeout 1 s" || fail "past the limit: exit $rc, '$msg'"
msg=$(NCU=/nonexistent/ncu "$tool" "$d/x" t -- true 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$msg" | grep -q "not found" || fail "no ncu: exit $rc, '$msg'"

expect_refusals "$tool" "" "$d/h" "$d/h t" "$d/h t --" "$d/h a/b -- true" "$d/h t --skip x -- true" "$d/h t --timeout 0 -- true" \
  "$d/h t --frob -- true" "$d/h t --cache some -- true" "$d/h t true"
echo "ncu-one: ok"
