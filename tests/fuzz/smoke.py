#!/usr/bin/python3
"""smoke.py: the fuzz smoke test that ctest runs (label "fuzz").

    smoke.py FUZZER FUZZ_DIR RUNS

Runs the libFuzzer binary FUZZER for RUNS inputs in all: first every seed of
FUZZ_DIR/corpus (FUZZ_DIR/corpus-NAME for fuzz_NAME when there is one) and
every kept crash of FUZZ_DIR/regressions, then mutations
of them, with FUZZ_DIR/percore.dict.  New inputs go to a temporary folder
(never into the source tree); a crash, leak, timeout or out-of-memory input
is written to the current folder (crash-*, leak-*, ...) and named in the
output: to keep one, copy it into FUZZ_DIR/regressions.  Prints one line
for tests/RELIABILITY.md:

    RELIABILITY scenario="fuzz: fuzz_resp" load="N inputs, S seeds" faults="none"
      bad_inputs=N crashes=C leaks=L lost_writes=n/a max_rss_kb=R

(on one line; every input is arbitrary bytes, so bad_inputs counts them all;
max_rss_kb is the fuzzer process's peak, from getrusage).  Exit status 0
when the run finished with no crash and no leak.
"""

import glob
import os
import re
import resource
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    fuzzer, fuzz_dir, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    target = os.path.basename(fuzzer)
    own = os.path.join(fuzz_dir, "corpus-" + target.replace("fuzz_", "", 1))  # corpus-rdb: fuzz_rdb's alone
    seed_dirs = [own if os.path.isdir(own) else os.path.join(fuzz_dir, "corpus"),
                 os.path.join(fuzz_dir, "regressions")]
    seeds = sum(len([f for f in os.listdir(d) if not f.startswith(".")]) for d in seed_dirs)
    with tempfile.TemporaryDirectory(prefix="percore-fuzz-") as new_inputs:
        proc = subprocess.run(
            [fuzzer, "-runs=%d" % runs, "-seed=1", "-timeout=30", "-rss_limit_mb=2048",
             "-dict=" + os.path.join(fuzz_dir, "percore.dict"), "-artifact_prefix=./" + target + "-",
             new_inputs] + seed_dirs,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    rss_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out = proc.stdout
    done = re.search(r"^Done (\d+) runs", out, re.M)
    executed = re.findall(r"^#(\d+)\s", out, re.M)
    inputs = int(done.group(1)) if done else (int(executed[-1]) if executed else 0)
    artifacts = re.findall(r"Test unit written to (\S+)", out)
    leaks = len([a for a in artifacts if "-leak-" in a])
    crashes = len(artifacts) - leaks
    if proc.returncode != 0 and not artifacts:
        crashes = 1  # died before writing its input
    if proc.returncode != 0:
        sys.stdout.write(out[-6000:])
        for a in artifacts:
            print("smoke.py: kept %s (copy it into %s to replay it in every run)" % (a, seed_dirs[1]))
    print('RELIABILITY scenario="fuzz: %s" load="%d inputs, %d seeds" faults="none" bad_inputs=%d '
          'crashes=%d leaks=%d lost_writes=n/a max_rss_kb=%d'
          % (target, inputs, seeds, inputs, crashes, leaks, rss_kb))
    sys.exit(0 if proc.returncode == 0 and not crashes and not leaks else 1)


if __name__ == "__main__":
    main()
