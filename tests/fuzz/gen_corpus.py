#!/usr/bin/python3
"""gen_corpus.py: the fuzz targets' seed corpus, from the differential scripts.

    tests/fuzz/gen_corpus.py            # rewrites tests/fuzz/corpus/

Every line of tests/compat/scripts/*.txt is a request (markers as diff.py
reads them: `!inline` lines are sent as they are, `!rawclose` bytes as they
are, `!sleep` and `!slow` lines are dropped: PFSELFTEST alone took 20 s of
the seeds' run under ASan).  Each script becomes:

  NAME-NNN      the script's requests in pipelines of GROUP, RESP-encoded
                (multibulk), one file each, in script order so that a GET
                follows its SET; a `!rawclose` request ends its pipeline
                (the server closes the connection after it), and so does
                one that would take the file past MAX_SEED bytes;
  NAME-inline   its first GROUP requests as inline commands, quoted.

A request longer than MAX_SEED alone is left out (the PFADDs of thousands
of elements that make HyperLogLogs dense: the shorter ones left do too), so
that libFuzzer's guessed -max_len, the largest seed, stays near 16 KB.

A file starts with the control byte both targets read (fuzz_input.h): the
pipelines of a script alternate between one piece (0) and small pieces, and
every third is flagged (FUZZ_FLAG).  Standard library only; reuses diff.py's
script parser and encoder.
"""

import glob
import importlib.util
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "compat", "scripts")
CORPUS = os.path.join(HERE, "corpus")
GROUP = 12
MAX_SEED = 16 * 1024
FUZZ_FLAG = 0x80

spec = importlib.util.spec_from_file_location("diff", os.path.join(HERE, "..", "compat", "diff.py"))
diff = importlib.util.module_from_spec(spec)
spec.loader.exec_module(diff)


def inline_form(args):
    """one inline line that sdssplitargs splits back into args"""
    words = []
    for a in args:
        w = "".join(chr(b) if 0x20 < b < 0x7f and chr(b) not in "\"'\\" else "\\x%02x" % b for b in a)
        words.append('"%s"' % w)
    return (" ".join(words) + "\r\n").encode()


def requests(path):
    """[(multibulk bytes, inline bytes, closes)] of one script"""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            parsed = diff.parse_script_line(line)
            if parsed is None or parsed[0] in ("sleep", "slow"):
                continue
            _, args, raw, closes = parsed
            if raw is not None:
                out.append((raw, raw, closes))
            else:
                out.append((diff.encode(args), inline_form(args), False))
    return out


def pipelines(reqs):
    group, size = [], 0
    for req in reqs:
        if len(req[0]) > MAX_SEED:
            continue
        if size + len(req[0]) > MAX_SEED:
            yield group
            group, size = [], 0
        group.append(req)
        size += len(req[0])
        if len(group) == GROUP or req[2]:
            yield group
            group, size = [], 0
    if group:
        yield group


def control(n):
    pieces = 0 if n % 2 == 0 else 1 + (n * 7) % 31
    return pieces | (FUZZ_FLAG if n % 3 == 2 else 0)


def main():
    shutil.rmtree(CORPUS, ignore_errors=True)
    os.makedirs(CORPUS)
    files = 0
    for path in sorted(glob.glob(os.path.join(SCRIPTS, "*.txt"))):
        name = os.path.splitext(os.path.basename(path))[0]
        reqs = requests(path)
        for n, group in enumerate(pipelines(reqs)):
            with open(os.path.join(CORPUS, "%s-%03d" % (name, n)), "wb") as f:
                f.write(bytes([control(n)]) + b"".join(r[0] for r in group))
            files += 1
        with open(os.path.join(CORPUS, name + "-inline"), "wb") as f:
            f.write(bytes([0]) + b"".join(r[1] for r in reqs[:GROUP]))
        files += 1
    print("gen_corpus.py: %d seed files in %s" % (files, os.path.relpath(CORPUS)))


if __name__ == "__main__":
    main()
