"""The sm90 measurement summaries in tools/ (sm90-cta-stats, sm90-trace-summary) on files made
here: the numbers they print from known stamps, and a one-line reason with a non-zero exit for
files that are not theirs. They read what -DNVFP4_SM90_CTA_STATS and -DNVFP4_SM90_TRACE builds
write (src/cuda/sm90/sm90_gemm_nvfp4.cu); no GPU is needed to check them."""

import os
import subprocess
import sys

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")


def run(tool, *args):
    p = subprocess.run([sys.executable, os.path.join(TOOLS, tool), *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return str(path)


def cta_stats(tmp_path):
    # Three CTAs; CTA 1 ends last and holds both trips (40 and 30 us).
    path = write(tmp_path / "stats.txt",
                 "# 128x2x1x1 grid 3 tiles 6: cta start_ns end_ns warpgroup_tiles\n"
                 "0 0 1000000 4\n1 100 1200000 4\n2 50 900000 4\n")
    write(tmp_path / "stats.txt.trips",
          "# 2 trips: cta warpgroup tile chunk row_block start_ns duration_ns\n"
          "1 0 1 80 2 500000 40000\n1 1 1 80 3 600000 30000\n")
    return path


def test_cta_stats_summarises_ends_and_trips(tmp_path):
    rc, out, err = run("sm90-cta-stats", cta_stats(tmp_path))
    assert rc == 0, err
    assert "CTA ends (us): first 900.0  median 1000.0" in out
    assert "last 1200.0" in out
    assert "trips: 2, duration (us) median 40.0  longest 40.0  sum 70.0 (23.3 per CTA)" in out
    # the last CTA first, with its trips
    lines = [l for l in out.splitlines() if l.strip().startswith("CTA ") and "ends" in l and "(us)" not in l]
    assert lines[0].split()[1] == "1" and "2 trips, 70.0 us in them" in lines[0]


def test_cta_stats_without_trips(tmp_path):
    path = cta_stats(tmp_path)
    write(tmp_path / "stats.txt.trips", "# 0 trips: cta warpgroup tile chunk row_block start_ns duration_ns\n")
    rc, out, err = run("sm90-cta-stats", path)
    assert rc == 0, err
    assert "trips: none" in out


def test_cta_stats_summarises_trip_phases(tmp_path):
    # Two trips stamped (record loaded at 1.5 / 1.7 us, test done at 1.6 / 2.0, element steps at
    # 1.7 / 4.0, one failing lane in the second); a file of four columns (before results v46 r4)
    # prints no record phase; a row of zeros is a trip that stamped nothing.
    path = cta_stats(tmp_path)
    write(tmp_path / "stats.txt.phases", "# 2 trips: ...\n64 1600 1700 0 1500\n96 2000 4000 1 1700\n")
    rc, out, err = run("sm90-cta-stats", path)
    assert rc == 0, err
    assert ("trip phases (us from the trip's start, median of 2): bound 0.1, record loaded 1.7, "
            "thread-group test 2.0, element steps 4.0; 1 with a lane failing the thread-group test") in out
    write(tmp_path / "stats.txt.phases", "# 2 trips\n0 0 0 0\n32 1600 1700 0\n")
    rc, out, err = run("sm90-cta-stats", path)
    assert rc == 0, err
    assert "median of 1): bound 0.0, thread-group test 1.6, element steps 1.7; 0 with" in out
    write(tmp_path / "stats.txt.phases", "# 2 trips\n0 0 0 0 0\n0 0 0 0 0\n")
    rc, out, err = run("sm90-cta-stats", path)
    assert rc == 0 and "trip phases: none stamped" in out
    write(tmp_path / "stats.txt.phases", "# 1 trip\n1 2 3 0 4\n")
    rc, out, err = run("sm90-cta-stats", path)
    assert rc == 1 and "1 lines for 2 trips" in err and len(err.strip().splitlines()) == 1


def test_cta_stats_refuses_other_files(tmp_path):
    rc, out, err = run("sm90-cta-stats", str(tmp_path / "missing.txt"))
    assert rc == 1 and err.startswith("sm90-cta-stats: ") and len(err.strip().splitlines()) == 1
    bad = write(tmp_path / "bad.txt", "1 2 3\n")
    write(tmp_path / "bad.txt.trips", "")
    rc, out, err = run("sm90-cta-stats", bad)
    assert rc == 1 and "4 columns per line expected" in err
    words = write(tmp_path / "words.txt", "name, driver_version\n")
    rc, out, err = run("sm90-cta-stats", words)
    assert rc == 1 and "a line of integers expected" in err
    rc, out, err = run("sm90-cta-stats")
    assert rc == 2 and "Usage" in err


def test_trace_summary_reads_both_kinds(tmp_path):
    # Chunk g: event e at 1000 g + 10 e ns (nine events), so every event comes every 1000 ns.
    rows = ["%d %s" % (g, " ".join(str(1000 * g + 10 * e) for e in range(9))) for g in range(40)]
    trace = write(tmp_path / "t.trace", "# test trace\n" + "\n".join(rows) + "\n")
    # Two warpgroups, four events each: done at 1000 g, then +100, +300, +350; warpgroup 1 500 ns later.
    wg = ["%d %s" % (g, " ".join(str(1000 * g + 500 * w + d) for w in range(2) for d in (0, 100, 300, 350)))
          for g in range(40)]
    trace_wg = write(tmp_path / "t.trace.wg", "# test wg trace\n" + "\n".join(wg) + "\n")
    rc, out, err = run("sm90-trace-summary", trace, trace_wg)
    assert rc == 0, err
    assert "1000.0 ns/chunk" in out
    assert "e0 -> e7 (copies issued -> applied): median 70 ns" in out
    assert "warpgroup 0: a chunk every 1000 ns" in out and "warpgroup 1: a chunk every 1000 ns" in out
    assert "issued -> those MMAs done 700 ns" in out


def test_trace_summary_refuses_other_files(tmp_path):
    bad = write(tmp_path / "bad.trace", "0 1 2\n")
    rc, out, err = run("sm90-trace-summary", bad)
    assert rc == 1 and err.startswith("sm90-trace-summary: ") and "not an sm90 trace" in err
