#!/usr/bin/env python3
"""ctest tools.bench-compare: tools/bench-compare on a committed A/B folder (results v28 r3, HEAD
de0d606's kernel `fin` against e11ace4's `cur` on an H200) must give the numbers that folder's README
and the project README state, read the forced-configuration rows of results v31 r2 and another
backend's rows (--backend, results v50 r1), and refuse what it cannot read with a one-line error.

Usage: bench_compare_test.py --tool tools/bench-compare --results benchmarks/results
"""
import argparse
import os
import subprocess
import sys
import tempfile


def run(tool, *args):
    r = subprocess.run([sys.executable, tool, *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--results", required=True)
    a = ap.parse_args()
    d = os.path.join(a.results, "2026-12-05-h100-h200-sm90-v28", "r3")
    failures = []

    rc, out, err = run(a.tool, d)
    lines = out.splitlines()
    want = {  # (M, linear, config) -> fin's change of mean time against cur, as the folder's README says
        ("128", "mlp_fc2", "128x1x1x1"): "fin -7.8 %",
        ("4096", "attn_qkv_proj", "128x2x1x1"): "fin -5.9 %",
        ("16", "attn_qkv_proj", "16x3x1x1"): "fin -4.7 %",
        ("128", "attn_qkv_proj", "128x3x1x2"): "fin +0.5 %",
    }
    if rc != 0 or len(lines) != 21:
        failures.append(f"the comparison: exit {rc}, {len(lines)} lines (expected 0 and a header + 20 rows):\n{out}{err}")
    for (m, linear, config), text in want.items():
        row = [l for l in lines if l.split()[:5] == ["M", "=", m, linear, config]]
        if len(row) != 1 or text not in row[0]:
            failures.append(f"M = {m} {linear} {config}: expected '{text}' in {row}")

    rc, out, err = run(a.tool, d, "--markdown", "fin")
    table = out.splitlines()
    qkv = "| attn_qkv_proj | 0.58-0.59 (35.1-35.6 us) | 0.63-0.64 (38.8-39.1 us) | 0.84 (50.4-51.0 us) | 1.32-1.33 (83.4-84.1 us) | 1.43-1.44 (1.65 ms) |"
    out_row = "| attn_out_proj | **1.07** (25.0-25.2 us) | **1.22-1.25** (29.4-29.7 us) | 1.44-1.45 (35.0-35.2 us) | 1.66-1.67 (43.1-43.3 us) | 1.58-1.59 (0.62 ms) |"
    if rc != 0 or len(table) != 6 or qkv not in table or out_row not in table:
        failures.append(f"--markdown fin: exit {rc}, expected the README's rows (K-split cells in bold):\n{out}{err}")

    # Reports of `nvfp4 bench --sm90-config LIST` name their rows "sm90@CONFIG" (results v31 r2:
    # two binaries, three configurations forced at M = 512-4096; the README's r2 table).
    rc, out, err = run(a.tool, os.path.join(a.results, "2026-12-06-h100-sm90-v31", "r2"), "--base", "t3e")
    rows = out.splitlines()
    for m, linear, config, text in (("4096", "attn_qkv_proj", "96x3x1x1", "t3e 1878.2-1901.7 us"),
                                    ("512", "mlp_fc2", "96x2x1x1", "t3e 191.2-191.3 us")):
        row = [l for l in rows if l.split()[:5] == ["M", "=", m, linear, config]]
        if rc != 0 or len(rows) != 49 or len(row) != 1 or text not in row[0]:
            failures.append(f"sm90@CONFIG rows: exit {rc}, {len(rows)} lines, M = {m} {linear} {config}: {row}{err}")

    # --backend: results v50 r1 timed sm90-stream alone (its README's table: ga against fin); the
    # default backend finds no rows there and says so in one line.
    v50 = os.path.join(a.results, "2026-12-07-h100-sm90-v50", "r1", "ab")
    rc, out, err = run(a.tool, v50, "--base", "fin", "--backend", "sm90-stream")
    rows = out.splitlines()
    for m, linear, config, text in (("16", "attn_out_proj", "16x1x1x1x3", "ga +5.3 %"),
                                    ("256", "attn_out_proj", "96x2x1x1", "ga -0.1 %")):
        row = [l for l in rows if l.split()[:5] == ["M", "=", m, linear, config]]
        if rc != 0 or len(rows) != 17 or "sm90-stream time against 'fin'" not in rows[0] or len(row) != 1 or text not in row[0]:
            failures.append(f"--backend sm90-stream: exit {rc}, {len(rows)} lines, M = {m} {linear} {config}: {row}{err}")
    rc, out, err = run(a.tool, v50, "--base", "fin")
    if rc != 4 or "with sm90 rows" not in err or len(err.strip().splitlines()) != 1:
        failures.append(f"no sm90 rows: exit {rc}, stderr {err!r} (expected 4 and one line)")

    for args, code, text in (([d, "--base", "nope"], 4, "no report of 'nope'"),
                             ([d, "--markdown", "nope"], 4, "no report of 'nope'"),
                             ([os.path.join(d, "no-such-folder")], 2, "is not a folder")):
        rc, out, err = run(a.tool, *args)
        if rc != code or text not in err or len(err.strip().splitlines()) != 1:
            failures.append(f"{args}: exit {rc}, stderr {err!r} (expected {code} and one line with '{text}')")
    with tempfile.TemporaryDirectory() as t:
        with open(os.path.join(t, "x-m16-1.json"), "w") as f:
            f.write("{not json")
        rc, out, err = run(a.tool, t)
        if rc != 4 or "is not JSON" not in err or len(err.strip().splitlines()) != 1:
            failures.append(f"a broken report: exit {rc}, stderr {err!r}")
        os.remove(os.path.join(t, "x-m16-1.json"))
        rc, out, err = run(a.tool, t)
        if rc != 4 or "no NAME-mM" not in err:
            failures.append(f"an empty folder: exit {rc}, stderr {err!r}")

    for f in failures:
        print("FAILED:", f)
    print("bench-compare:", "FAILED" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
