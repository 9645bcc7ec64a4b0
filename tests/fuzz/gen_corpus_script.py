#!/usr/bin/python3
"""gen_corpus_script.py: writes fuzz_script's seed corpus (corpus-script/).

Each seed is a control byte, a flags byte and a program (fuzz_script.c says
how it reads): one seed per statement kind, under each of the flag sets
below, with operands from a seeded generator, plus a few longer mixes.
Run it again after changing fuzz_script.c's program format.
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus-script")
STATEMENTS = 16
# flags: RESP3, EVAL_RO, shebang, no-writes, FCALL, numkeys in bits 5-6
FLAG_SETS = [0x00, 0x21, 0x44, 0x4e, 0x70, 0x31]
SAMPLES = [b"", b"[1,2,{\"a\":null}]", b"\x93\x01\xa1a\xc0", b">i4 c0", b"abc", b"\x00\xff", b"{\"x\":1.5e300}",
           b"b", b"-3.25", b"\xdc\x00\x03\x01\x02\x03"]


def operand(rng):
    s = rng.choice(SAMPLES)
    return bytes([len(s)]) + s


def program(rng, ops):
    out = bytearray()
    for op in ops:
        out.append(op)
        for _ in range(6):  # enough operand bytes for any statement; the rest is read as the next ones
            out += operand(rng) if rng.random() < 0.5 else bytes([rng.randrange(256)])
    out.append(rng.randrange(4))
    return bytes(out)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = random.Random(7)
    n = 0
    for flags in FLAG_SETS:
        for op in range(STATEMENTS):
            seed = bytes([rng.randrange(4), flags]) + program(rng, [op, rng.randrange(16)])
            with open(os.path.join(OUT, "seed-%03d" % n), "wb") as f:
                f.write(seed)
            n += 1
    for _ in range(8):
        seed = bytes([0, rng.choice(FLAG_SETS)]) + program(rng, [rng.randrange(16) for _ in range(12)])
        with open(os.path.join(OUT, "seed-%03d" % n), "wb") as f:
            f.write(seed)
        n += 1
    print("%d seeds in %s" % (n, OUT))


if __name__ == "__main__":
    main()
