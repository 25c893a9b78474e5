#!/usr/bin/env python3
"""ctest tools.sm90-trace-summary: tools/sm90-trace-summary --tile-chunks on committed per-warpgroup
traces (results v33: r1's trace of f8f5591's kernel and r2's of the tensor-copy epilogue, qkv at
M = 4096, 84 chunks a tile) must give the tile-boundary figures that folder's README states, a
trace of one tile (results v34 r5) its per-chunk pace, K-split traces (results v39 r2, v40 r1) their
ring read by slot and a chunk-sum warpgroup read by stage, and refuse a bad --tile-chunks with a
one-line error and exit 2.

Usage: trace_summary_test.py --tool tools/sm90-trace-summary --results benchmarks/results
"""
import argparse
import os
import re
import subprocess
import sys


def run(tool, *args):
    r = subprocess.run([sys.executable, tool, *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--results", required=True)
    a = ap.parse_args()
    d = os.path.join(a.results, "2026-12-06-h100-sm90-v33")
    failures = []
    want = {  # trace -> per warpgroup (epilogue ns, restart ns, MMAs done to MMAs done across a boundary)
        "r1/trace-tr-m4096-qkv.txt.wg": [(2176, 832, 3040), (1984, 800, 2912)],
        "r2/trace-trtma-m4096-qkv.txt.wg": [(704, 896, 1696), (736, 832, 1632)],
    }
    for trace, figures in want.items():
        rc, out, err = run(a.tool, "--tile-chunks", "84", os.path.join(d, trace))
        got = [tuple(int(v) for v in m.groups()) for m in
               (re.search(r"epilogue (\d+) ns, restart (\d+) ns; MMAs done to MMAs done (\d+) ns", l) for l in out.splitlines()) if m]
        if rc != 0 or got != figures:
            failures.append(f"{trace}: exit {rc}, boundaries {got} (expected {figures}):\n{out}{err}")
        # without --tile-chunks the same trace is summarised as before (no boundary lines)
        rc, out, err = run(a.tool, os.path.join(d, trace))
        if rc != 0 or "tile boundaries" in out or out.count("warpgroup ") < 2:
            failures.append(f"{trace} without --tile-chunks: exit {rc}:\n{out}{err}")
    # A trace whose CTA 0 ran fewer chunks than the rows written (results v34 r5: one tile of 112
    # chunks at M = 128, rows for 16 tiles): summarised over the stamped chunks, a lone 128x1x1x1
    # warpgroup at 401 ns a chunk as that folder's README states (not silently nothing).
    lone = os.path.join(a.results, "2026-12-06-h100-sm90-v34", "r5", "trace-m128-attn_out_proj.txt.wg")
    rc, out, err = run(a.tool, lone)
    if rc != 0 or "warpgroup 0: a chunk every 401 ns" not in out:
        failures.append(f"{lone}: exit {rc} (expected warpgroup 0 at 401 ns a chunk):\n{out}{err}")
    # K-split traces (16x1x1x1x3 at M = 16): the ring read by slot and a chunk-sum warpgroup read by
    # stage, the figures the folders' READMEs and docs/hopper-exact-path.md state. v39 r2: 462911f's
    # kernel; v40 r1: the weight grouped by four chunks, a stage's weight one copy.
    for trace, wants in (
            (("2026-12-07-h100-sm90-v39", "r2", "trace-ta3d-m16.txt"),
             ("ring by slot (6 stages, 3 chunk-sum warpgroups, 4 chunks a stage; 22 stages): slot released -> copy "
              "warp at the stage 672 ns, -> copies issued 416 ns, -> its warpgroup done with its stage before 512 ns; "
              "a stage's copies every 544 ns",
              "first MMAs of its next 352 ns")),
            (("2026-12-07-h100-sm90-v40", "r1", "trace-twg-m16.txt"),
             ("chunk-sum warpgroup by stage: a chunk every 352 ns within a stage (issued -> MMAs done 192 ns, -> sums "
              "stored 96 ns, -> next issued 32 ns); its last sums of a stage -> first MMAs of its next 288 ns",))):
        path = os.path.join(a.results, *trace)
        rc, out, err = run(a.tool, path)
        for want in wants:
            if rc != 0 or want not in out:
                failures.append(f"{path}: exit {rc} (expected '{want}'):\n{out}{err}")
    # a one-chain trace (v34 r5's, no K-split) prints neither reading
    one = os.path.join(a.results, "2026-12-06-h100-sm90-v34", "r5", "trace-m128-attn_out_proj.txt")
    rc, out, err = run(a.tool, one)
    if rc != 0 or "ring by slot" in out or "by stage" in out:
        failures.append(f"{one}: exit {rc} (expected neither K-split reading for a one-chain tile):\n{out}{err}")
    for bad in (["--tile-chunks", "0", "x.wg"], ["--tile-chunks", "eight", "x.wg"], ["--tile-chunks", "84"]):
        rc, out, err = run(a.tool, *bad)
        if rc != 2 or len(err.strip().splitlines()) != 1 or out:
            failures.append(f"{' '.join(bad)}: exit {rc} (expected 2 and one line on stderr): {out!r} {err!r}")
    for f in failures:
        print("FAIL", f)
    print("tools.sm90-trace-summary:", "FAIL" if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
