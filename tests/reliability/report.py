#!/usr/bin/python3
"""report.py: build, run the reliability tests and write tests/RELIABILITY.md.

The tests labelled "reliability" in ctest (tests/integration/CMakeLists.txt,
RELIABILITY_TESTS and the ones registered with the label directly) print, for
each scenario they run, one line on stdout:

  RELIABILITY scenario="S" load="L" faults="F" bad_inputs=N crashes=N leaks=N
              lost_writes=N|n/a max_rss_kb=N

(C tests: pc_reliability_line in client/testclient.h; Python tests:
tests/reliability/reliability.py).  This script runs `ctest -L reliability
-V` in a release build and in an AddressSanitizer+UBSan build (LeakSanitizer
on, as tests/run.sh runs it), collects the lines and writes one table row per
scenario of each test (the same scenario name from two tests, e.g. one per
shard count, makes two rows):
  - load, faults, bad inputs, lost writes: from the release run (the ASan run's
    when there is no release line);
  - max RSS: from the release run (sanitizers inflate memory);
  - crashes: the largest count either run reports, and at least 1 when the
    test's output in the ASan run holds a sanitizer error report or ctest saw
    it die (signal, timeout);
  - leaks: from the ASan run only (LeakSanitizer records in the line or the
    test output); n/a without an ASan run;
  - ctest: each run's verdict for the test that printed the row.
A labelled test that prints no line still gets a row, so a failure that
kills a test before its report cannot go missing.

Usage: report.py [--release DIR] [--asan DIR] [--no-asan] [--fuzz DIR] [--no-fuzz]
                 [--no-build] [--out FILE] [-j N]
Defaults: build-reliability, build-reliability-asan, build-reliability-fuzz,
tests/RELIABILITY.md.  The fuzz smoke runs (tests/fuzz, labelled
"reliability" too) come from the libFuzzer build, which has ASan built in.
Exit status: 0 when every reliability test passed in every run, 1 otherwise
(the table is written either way).
"""
import argparse
import collections
import datetime
import os
import platform
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LINE = re.compile(r'RELIABILITY scenario="([^"]*)" load="([^"]*)" faults="([^"]*)" '
                  r'bad_inputs=(\d+) crashes=(\d+) leaks=(\d+) lost_writes=(\d+|n/a) '
                  r'max_rss_kb=(-?\d+)')
RESULT = re.compile(r'^\s*\d+/\d+ Test\s+#(\d+): (\S+) \.*\s*(?:\*\*\*)?(.*?)\s+[\d.]+ sec\s*$')
OUTPUT = re.compile(r'^(\d+): (.*)$')
SANITIZER_ERRORS = ("ERROR: AddressSanitizer", "runtime error:", "WARNING: ThreadSanitizer")
LEAK_RECORD = re.compile(r'^(Direct|Indirect) leak of')
FIELDS = ("load", "faults", "bad_inputs", "crashes", "leaks", "lost_writes", "max_rss_kb")

Run = collections.namedtuple("Run", "name tests")     # tests: {test: TestRun}
TestRun = collections.namedtuple("TestRun", "status lines errors leaks")


def build(build_dir, cmake_args, jobs):
    subprocess.run(["cmake", "-S", ROOT, "-B", build_dir] + cmake_args, check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", build_dir, "-j%d" % jobs], check=True,
                   stdout=subprocess.DEVNULL)


def run_ctest(name, build_dir, env, jobs, label="reliability"):
    """ctest -L <label> -V; returns a Run with every test's verdict, its
    RELIABILITY lines and the sanitizer findings in its output"""
    p = subprocess.run(["ctest", "-L", label, "-V", "-j%d" % jobs], cwd=build_dir,
                       env=dict(os.environ, **env), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, errors="replace")
    output = collections.defaultdict(list)
    verdict = {}
    for ln in p.stdout.splitlines():
        m = RESULT.match(ln)
        if m:
            verdict[m.group(1)] = (m.group(2), m.group(3).strip())
            continue
        m = OUTPUT.match(ln)
        if m:
            output[m.group(1)].append(m.group(2))
    if not verdict:
        sys.exit("report.py: no reliability tests ran in %s:\n%s" % (build_dir, p.stdout[-3000:]))
    tests = {}
    for num, (test, status) in verdict.items():
        out = output[num]
        lines = [dict(zip(("scenario",) + FIELDS, m.groups()))
                 for m in filter(None, (LINE.search(x) for x in out))]
        errors = sum(any(e in x for e in SANITIZER_ERRORS) for x in out)
        leaks = sum(bool(LEAK_RECORD.match(x.lstrip())) for x in out)
        tests[test] = TestRun(status, lines, errors, leaks)
    return Run(name, tests)


def died(status):
    return status not in ("Passed", "Failed") and not status.startswith("Skipped")


def combine(release, asan):
    """{(scenario, test): row dict}"""
    rows = {}
    for run in filter(None, (release, asan)):
        for test, t in run.tests.items():
            for ln in t.lines or [dict(scenario="%s (no RELIABILITY line)" % test,
                                       load="?", faults="?", bad_inputs="?", crashes="0",
                                       leaks="0", lost_writes="?", max_rss_kb="-1")]:
                row = rows.setdefault((ln["scenario"], test),
                                      dict(crashes=0, leaks=0, verdicts={}))
                if run is release or "load" not in row:
                    for f in ("load", "faults", "bad_inputs", "lost_writes"):
                        row[f] = ln[f]
                if run is release:
                    row["max_rss_kb"] = ln["max_rss_kb"]
                crashes = int(ln["crashes"])
                if t.errors or died(t.status):
                    crashes = max(crashes, 1, t.errors)
                row["crashes"] = max(row["crashes"], crashes)
                if run is asan:
                    row["leaks"] = max(row["leaks"], int(ln["leaks"]), t.leaks)
                row["verdicts"][run.name] = t.status
    if not asan:
        for row in rows.values():
            row["leaks"] = "n/a"
    return rows


def git(*args):
    p = subprocess.run(["git", "-C", ROOT] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    return p.stdout.strip()


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            return m.group(1) if m else "?"
    except OSError:
        return "?"


def cell(x):
    return str(x).replace("|", "\\|")


def write_table(path, rows, runs, argv):
    commit = git("rev-parse", "--short", "HEAD") or "?"
    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") \
        else ""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = ["# Reliability results", "",
           "Generated by `tests/reliability/report.py%s` (do not edit by hand)." %
           ("".join(" " + a for a in argv)),
           "",
           "- when: %s" % now,
           "- machine: %d CPUs (%s), Linux %s, %s" % (os.cpu_count() or 0, cpu_model(),
                                                        platform.release(), platform.machine()),
           "- git commit: %s%s" % (commit, dirty)]
    for run, desc in runs:
        passed = sum(t.status == "Passed" for t in run.tests.values())
        out.append("- %s run: %s (`ctest -L reliability`: %d of %d tests passed)" %
                   (run.name, desc, passed, len(run.tests)))
    out += ["", "| scenario | load | faults injected | bad inputs | crashes | leaks | lost writes "
            "| max RSS (KB) | test: ctest %s |" % " / ".join(r.name for r, _ in runs),
            "|---|---|---|---:|---:|---:|---:|---:|---|"]
    for scenario, test in sorted(rows):
        r = rows[scenario, test]
        rss = r.get("max_rss_kb", "-1")
        out.append("| " + " | ".join(cell(x) for x in (
            scenario, r["load"], r["faults"], r["bad_inputs"], r["crashes"], r["leaks"],
            r["lost_writes"], rss if int(rss) >= 0 else "?",
            "%s: %s" % (test, " / ".join(r["verdicts"].get(run.name, "-") for run, _ in runs))))
            + " |")
    out += ["", "Legend:", "",
            "- **load**: the clients and operations the scenario applied; **faults injected**: "
            "what it did to the server or its connections meanwhile.",
            "- **bad inputs**: malformed or hostile requests sent (each must get an error "
            "reply or a closed connection, never harm anyone else).",
            "- **crashes**: server deaths, kills, non-zero exits and sanitizer error reports "
            "(AddressSanitizer, UBSan) in either run.",
            "- **leaks**: LeakSanitizer leak records in the ASan run (n/a: no ASan run).",
            "- **lost writes**: acknowledged writes missing afterwards (n/a: the scenario "
            "checks something else, e.g. linearizability, and fails on any violation).",
            "- **max RSS**: the server's peak resident memory (VmHWM) in the release run.",
            "- **test**: the ctest test that printed the row and its verdict in each run; a "
            "row named \"(no RELIABILITY line)\" is a labelled test that printed none.", ""]
    with open(path, "w") as f:
        f.write("\n".join(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", default=os.path.join(ROOT, "build-reliability"))
    ap.add_argument("--asan", default=os.path.join(ROOT, "build-reliability-asan"))
    ap.add_argument("--no-asan", action="store_true")
    ap.add_argument("--fuzz", default=os.path.join(ROOT, "build-reliability-fuzz"),
                    help="the libFuzzer build (clang, ASan+UBSan built in): its smoke runs")
    ap.add_argument("--no-fuzz", action="store_true")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "RELIABILITY.md"))
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    if not args.no_build:
        build(args.release, ["-DCMAKE_BUILD_TYPE=Release"], args.j)
        if not args.no_asan:
            build(args.asan, ["-DCMAKE_BUILD_TYPE=Debug", "-DPERCORE_SANITIZE=address"], args.j)
    release = run_ctest("release", args.release, {}, args.j)
    runs = [(release, "`%s`, Release" % os.path.relpath(args.release, ROOT))]
    asan = None
    if not args.no_asan:
        asan = run_ctest("asan", args.asan,
                         {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=1"}, args.j)
        runs.append((asan, "`%s`, Debug + AddressSanitizer/UBSan/LeakSanitizer" %
                     os.path.relpath(args.asan, ROOT)))
    if not args.no_fuzz:
        # the fuzz targets are their own sanitizer build: their rows are both the release and the ASan run
        if not args.no_build:
            subprocess.run(["cmake", "-S", ROOT, "-B", args.fuzz, "-DPERCORE_FUZZ=ON"], check=True,
                           stdout=subprocess.DEVNULL, env=dict(os.environ, CC="clang"))
            subprocess.run(["cmake", "--build", args.fuzz, "-j%d" % args.j, "--target", "fuzz_resp",
                            "fuzz_engine"], check=True, stdout=subprocess.DEVNULL)
        fuzz = run_ctest("fuzz", args.fuzz, {}, args.j, label="fuzz")  # only the fuzz targets are built there
        runs.append((fuzz, "`%s`, libFuzzer smoke runs (clang, ASan+UBSan)" % os.path.relpath(args.fuzz, ROOT)))
        release.tests.update(fuzz.tests)
        if asan:
            asan.tests.update(fuzz.tests)
    rows = combine(release, asan)
    write_table(args.out, rows, runs, sys.argv[1:])
    print("report.py: %d scenarios written to %s" % (len(rows), args.out))
    ok = all(t.status == "Passed" for run, _ in runs for t in run.tests.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
