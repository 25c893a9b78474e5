#!/usr/bin/env python3
"""ctest sass.sm90: tools/sass-sm90 on the built library, then on listings mutated to break each
property it checks (each must fail, naming the property), so that a check that cannot fail is
caught here. Exit 77 (skipped) without cuobjdump. The library is disassembled once, here (most of
the test's time on two cores): the tool reads that listing through --sass.

Usage: sass_sm90_test.py --tool tools/sass-sm90 --library libnvfp4.a --cli nvfp4
       sass_sm90_test.py --tool tools/sass-sm90 --switches sm90_gemm_nvfp4.cu.o

--switches (ctest sass.sm90-switches): the GEMM object built with its measurement switches
(NVFP4_SM90_VERDICT_AHEAD, NVFP4_SM90_PIPE2, NVFP4_SM90_HALVES): the tool must pass it, find the
pipelined loops where the switches put them (16x1x1x1, 32x1x1x1, 64x1x1x1 two chunk-sum buffers,
128x1x1x1 two halves) and nowhere else, and catch mutations of those loops.
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


def function_lines(lines, name, keep):
    """Indices into a listing's lines of function name's instructions whose address keep() accepts."""
    start = next(i for i, l in enumerate(lines) if "Function : " in l and l.strip().endswith(name))
    out = []
    for i in range(start + 1, len(lines)):
        if "Function : " in lines[i]:
            break
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s+", lines[i])
        if m and keep(int(m.group(1), 16)):
            out.append(i)
    return out


def first(copy, idx, rx):
    """The first of the listing lines idx that matches rx."""
    return next(i for i in idx if re.search(rx, copy[i]))


def plain(copy, idx):
    """The first of lines idx that is no MMA, branch, barrier or add: a safe one to replace."""
    return first(copy, idx, r"\*/\s+(IMAD|IADD3|LOP3|MOV|SHF|PRMT|HMUL2|LEA)\b")


def replace_at(copy, i, text):
    copy[i] = re.sub(r"(\*/\s+)[^;]*;", lambda m: m.group(1) + text + " ;", copy[i], count=1)


def mutations(tool_path, lines, cases, lines_of, path):
    """Each case (what, config, edit, expected message) applied to a copy of the listing's lines at
    lines_of(config) and written to path: the tool must fail on it, naming the property. The
    failures of those that it did not catch."""
    failures = []
    for what, cfg, edit, expect in cases:
        copy = list(lines)
        edit(copy, lines_of(cfg))
        with open(path, "w") as f:
            f.write("\n".join(copy))
        rc, out = run(tool_path, path)
        ok = rc == 1 and any(l.startswith(f"  {cfg}: ") and expect in l for l in out.splitlines())
        print(f"mutation '{what}' in {cfg}: exit {rc}, " + ("caught" if ok else "NOT caught"))
        if not ok:
            failures.append(f"mutation '{what}' in {cfg} not caught:\n{out}")
    return failures


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
        return function_lines(lines, name, lambda a: lo <= a <= hi)

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
        ("local memory in the loop", "64x1x1x1", lambda c, idx: replace_at(c, plain(c, idx), "STL [R1+0x10], R2"), "local-memory"),
        ("a conversion in the loop", "16x3x1x1", lambda c, idx: replace_at(c, plain(c, idx), "F2F.F16.F32 R4, R5"), "conversion"),
        ("another MMA shape", "32x2x1x1", lambda c, idx: c.__setitem__(i := first(c, idx, r"HGMMA"), c[i].replace("64x32x16", "64x16x16", 1)),
         "expected HGMMA.64x32x16.F32"),
        ("a load under the MMAs moved after their wait", "128x2x1x1", load_after_wait, "shared loads between"),
        ("a K-split chain of three", "16x1x1x1x3", lambda c, idx: replace_at(c, first(c, idx, r"HGMMA.*gsb0"), "NOP"), "expected 4"),
    ]
    mutated_path = os.path.join(d, "mutated.sass")
    failures += mutations(a.tool, lines, cases, loop_lines, mutated_path)
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


PIPELINED = {"16x1x1x1": 16, "32x1x1x1": 32, "64x1x1x1": 64, "128x1x1x1": 64}  # config -> the MMA's tokens


def check_switches(a, tool, cuobjdump, d):
    """The failures of the tool on the switches' object and on mutations of its pipelined loops."""
    failures = []
    obj = a.switches.split(";")[0]
    path = os.path.join(d, "switches.sass")
    listing = tool.sass_text(obj, cuobjdump)
    with open(path, "w") as f:
        f.write(listing)
    report = os.path.join(d, "switches.json")
    rc, out = run(a.tool, "--json", report, path)
    print(out)
    if rc != 0:
        failures.append(f"the switches' object: exit {rc}")
        return failures
    with open(report) as f:
        kernels = {k["config"]: k for k in json.load(f)["kernels"]}
    for cfg, k in kernels.items():
        want = cfg in PIPELINED
        if bool(k.get("pipelined")) != want:
            failures.append(f"{cfg}: pipelined loop {'not ' if want else ''}found, expected {'one' if want else 'none'}")
        elif want and k["hgmma_shapes"] != [f"HGMMA.64x{PIPELINED[cfg]}x16.F32"]:
            failures.append(f"{cfg}: MMA {k['hgmma_shapes']}")
    found = tool.kernels(listing)
    lines = listing.split("\n")

    def cycle_lines(cfg):
        """Indices into `lines` of cfg's pipelined cycle."""
        name, _, ins = found[cfg]
        addrs = {ins[k][0] for k in tool.pipelined_cycle_at(ins)}
        return function_lines(lines, name, lambda a: a in addrs)

    cases = [
        ("serialised chain", "64x1x1x1", lambda c, idx: c.__setitem__(i := first(c, idx, r"HGMMA"), c[i].replace(" ;", ", gsb0 ;", 1)),
         "pipelined cycle chain"),
        ("a wait_group 1 made a full wait", "128x1x1x1",
         lambda c, idx: c.__setitem__(i := first(c, idx, r"DEPBAR.LE gsb0, 0x1"), c[i].replace("0x1", "0x0", 1)), "wait_group"),
        ("local memory in the cycle", "16x1x1x1", lambda c, idx: replace_at(c, plain(c, idx), "STL [R1+0x10], R2"), "local-memory"),
        ("an add not rounded toward zero", "32x1x1x1",
         lambda c, idx: c.__setitem__(i := first(c, idx, r"FADD\S*\.RZ"), c[i].replace(".RZ", "", 1)), "FADD.RZ"),
    ]
    failures += mutations(a.tool, lines, cases, cycle_lines, os.path.join(d, "switches-mutated.sass"))
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--library")
    ap.add_argument("--cli")
    ap.add_argument("--switches", help="the GEMM object built with the measurement switches")
    a = ap.parse_args()
    if not a.switches and not (a.library and a.cli):
        ap.error("--library and --cli, or --switches")
    tool = load_tool(a.tool)
    try:
        cuobjdump = tool.find_cuobjdump(None)
    except tool.Fail as e:
        print(f"skipped: {e}")
        return 77
    with tempfile.TemporaryDirectory() as d:
        if a.switches:
            failures = check_switches(a, tool, cuobjdump, d)
        else:
            configs = json.loads(subprocess.run([a.cli, "version", "--json"], capture_output=True, text=True,
                                                check=True).stdout)["sm90_configs"]
            failures = check(a, tool, cuobjdump, configs, d)
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
