#!/usr/bin/env python3
"""ctest sass.sm90: tools/sass-sm90 on the built library, then on listings mutated to break each
property it checks (each must fail, naming the property), so that a check that cannot fail is
caught here. Exit 77 (skipped) without cuobjdump. The library is disassembled once, here (most of
the test's time on two cores): the tool reads that listing through --sass.

Usage: sass_sm90_test.py --tool tools/sass-sm90 --library libnvfp4.a --cli nvfp4
"""
import argparse
import importlib.machinery
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile


def load_tool(path):
    loader = importlib.machinery.SourceFileLoader("sass_sm90", path)
    spec = importlib.util.spec_from_loader("sass_sm90", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def run(tool, *args):
    r = subprocess.run([sys.executable, tool, *args], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def check(a, tool, cuobjdump, configs, d):
    """The failures of the tool and of its self-test on the library, in scratch folder d."""
    failures = []
    path = os.path.join(d, "listing.sass")
    listing = tool.sass_text(a.library, cuobjdump)
    with open(path, "w") as f:
        f.write(listing)

    rc, out = run(a.tool, "--cuobjdump", cuobjdump, "--configs", ",".join(configs), "--sass", path, a.library)
    print(out)
    if rc != 0:
        failures.append(f"the built library: exit {rc}")
    # Its pre-pass lines come from the binary's resource usage: --sass must not have dropped them.
    if not any(l.startswith("pre-pass") for l in out.splitlines()):
        failures.append("the built library with --sass: no pre-pass line (the binary's resource usage was not read)")
    rc, out = run(a.tool, "--sass", a.library, a.library)
    if rc != 2 or "is not a cuobjdump -sass listing" not in out:
        failures.append(f"--sass with a binary: exit {rc}, expected 2:\n{out}")

    kernels = tool.kernels(listing)
    lines = listing.split("\n")

    def loop_lines(cfg):
        """Indices into `lines` of cfg's hot loop, by address within its function's text."""
        name, _, ins = kernels[cfg]
        (lo, hi), _ = tool.hot_loop(ins)
        start = next(i for i, l in enumerate(lines) if "Function : " in l and l.strip().endswith(name))
        out = []
        for i in range(start + 1, len(lines)):
            if "Function : " in lines[i]:
                break
            m = re.search(r"/\*([0-9a-f]{4,})\*/\s+", lines[i])
            if m and lo <= int(m.group(1), 16) <= hi:
                out.append(i)
        return out

    def plain(idx):
        """The first instruction of the loop that is no MMA, branch, barrier or add: a safe one to replace."""
        return next(i for i in idx if re.search(r"\*/\s+(IMAD|IADD3|LOP3|MOV|SHF|PRMT|HMUL2|LEA)\b", lines[i]))

    def mutated(cfg, edit):
        copy = list(lines)
        edit(copy, loop_lines(cfg))
        return "\n".join(copy)

    def first(copy, idx, rx):
        return next(i for i in idx if re.search(rx, copy[i]))

    def replace_at(copy, i, text):
        copy[i] = re.sub(r"(\*/\s+)[^;]*;", lambda m: m.group(1) + text + " ;", copy[i], count=1)

    def load_after_wait(copy, idx):
        """Turns the first shared load between the chain's last HGMMA and its wait (cyclically) into a NOP."""
        k = max(j for j, i in enumerate(idx) if re.search(r"HGMMA.*gsb0", copy[i]))
        for step in range(1, len(idx)):
            i = idx[(k + step) % len(idx)]
            if "WARPGROUP.DEPBAR" in copy[i]:
                break
            if re.search(r"\*/\s+LDS", copy[i]):
                replace_at(copy, i, "NOP")
                return
        raise AssertionError("no shared load between the chain's issue and its wait")

    cases = [
        ("serialised chain", "128x2x1x1", lambda c, idx: c.__setitem__(i := first(c, idx, r"HGMMA"), c[i].replace(" ;", ", gsb0 ;", 1)),
         "gsb0 on 2"),
        ("an add not rounded toward zero", "128x2x1x1", lambda c, idx: c.__setitem__(i := first(c, idx, r"FADD\S*\.RZ"), c[i].replace(".RZ", "", 1)),
         "FADD.RZ"),
        ("local memory in the loop", "64x1x1x1", lambda c, idx: replace_at(c, plain(idx), "STL [R1+0x10], R2"), "local-memory"),
        ("local memory in a two-chain loop", "128x3x1x2", lambda c, idx: replace_at(c, plain(idx), "LDL R2, [R1+0x10]"), "local-memory"),
        # 96x3x1x1 may hold one local load in its loop (tools/sass-sm90 LOCAL_LOADS_ALLOWED), no more and no store.
        ("a second local load in 96x3x1x1's loop", "96x3x1x1", lambda c, idx: replace_at(c, plain(idx), "LDL R2, [R1+0x10]"), "local-memory"),
        ("a local store in 96x3x1x1's loop", "96x3x1x1", lambda c, idx: replace_at(c, plain(idx), "STL [R1+0x10], R2"), "1 of them stores"),
        ("a conversion in the loop", "16x3x1x1", lambda c, idx: replace_at(c, plain(idx), "F2F.F16.F32 R4, R5"), "conversion"),
        ("another MMA shape", "32x2x1x1", lambda c, idx: c.__setitem__(i := first(c, idx, r"HGMMA"), c[i].replace("64x32x16", "64x16x16", 1)),
         "expected HGMMA.64x32x16.F32"),
        ("a load under the MMAs moved after their wait", "128x2x1x1", load_after_wait, "shared loads between"),
        ("a K-split chain of three", "16x1x1x1x3", lambda c, idx: replace_at(c, first(c, idx, r"HGMMA.*gsb0"), "NOP"), "expected 4"),
    ]
    mutated_path = os.path.join(d, "mutated.sass")
    for what, cfg, edit, expect in cases:
        with open(mutated_path, "w") as f:
            f.write(mutated(cfg, edit))
        rc, out = run(a.tool, mutated_path)
        ok = rc == 1 and any(l.startswith(f"  {cfg}: ") and expect in l for l in out.splitlines())
        print(f"mutation '{what}' in {cfg}: exit {rc}, " + ("caught" if ok else "NOT caught"))
        if not ok:
            failures.append(f"mutation '{what}' in {cfg} not caught:\n{out}")
    rc, _ = run(a.tool, path)
    if rc != 0:
        failures.append(f"the unmutated listing: exit {rc}")
    for what, lst in (("an extra", configs + ["8x1x1x1"]), ("a missing", configs[1:])):
        rc, out = run(a.tool, "--configs", ",".join(lst), path)
        ok = rc == 1 and "configurations missing" in out
        print(f"--configs with {what} configuration: exit {rc}, " + ("caught" if ok else "NOT caught"))
        if not ok:
            failures.append(f"--configs with {what} configuration not caught")
    # The pre-pass's register budget, through a cuobjdump that reports one register too many.
    res = subprocess.run([cuobjdump, "-res-usage", "-arch", "sm_90a", a.library], capture_output=True, text=True).stdout
    over = re.sub(r"(sm90_prep_a\S*:\n\s*REG:)(\d+)", lambda m: m.group(1) + str(int(m.group(2)) + 1), res, count=1)
    fake = os.path.join(d, "cuobjdump")
    with open(os.path.join(d, "res.txt"), "w") as f:
        f.write(over)
    with open(fake, "w") as f:
        f.write(f"#!/bin/sh\ncase \"$*\" in *-res-usage*) cat '{d}/res.txt' ;; *) cat '{path}' ;; esac\n")
    os.chmod(fake, 0o755)
    rc, out = run(a.tool, "--cuobjdump", fake, a.library)
    ok = over != res and rc == 1 and any(l.startswith("pre-pass") and "FAIL" in l for l in out.splitlines())
    print(f"pre-pass above its register budget: exit {rc}, " + ("caught" if ok else "NOT caught"))
    if not ok:
        failures.append(f"a pre-pass above its register budget not caught:\n{out}")
    rc, out = run(a.tool, path, "--compare", path)
    if rc != 0 or out.count("| same") != len(configs):
        failures.append("--compare of a listing with itself does not say 'same' for every configuration")
    rc, out = run(a.tool, path, "--compare", mutated_path)
    if "16x1x1x1x3 |" not in out or "hot loop differs" not in [l for l in out.splitlines() if l.startswith("16x1x1x1x3 |")][0]:
        failures.append("--compare does not see the mutated hot loop of 16x1x1x1x3")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--library", required=True)
    ap.add_argument("--cli", required=True)
    a = ap.parse_args()
    tool = load_tool(a.tool)
    try:
        cuobjdump = tool.find_cuobjdump(None)
    except tool.Fail as e:
        print(f"skipped: {e}")
        return 77
    configs = json.loads(subprocess.run([a.cli, "version", "--json"], capture_output=True, text=True, check=True).stdout)["sm90_configs"]
    with tempfile.TemporaryDirectory() as d:
        failures = check(a, tool, cuobjdump, configs, d)
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
