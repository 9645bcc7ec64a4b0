"""reliability.py: the results-table line of a Python-driven test, the same
as testclient's pc_reliability_line (client/testclient.h) prints for C ones:

  RELIABILITY scenario="S" load="L" faults="F" bad_inputs=N crashes=N leaks=N
              lost_writes=N|n/a max_rss_kb=N

tests/reliability/report.py collects these lines into tests/RELIABILITY.md.
Use: rss = max_rss_kb(server.proc.pid) before stopping the server (a
tests/compat/diff.py Server), status = server.stop(), then print(line(...)).
"""
import re

_ERROR_MARKS = ("ERROR: AddressSanitizer", "runtime error:", "WARNING: ThreadSanitizer")


def max_rss_kb(pid):
    """peak resident set (VmHWM) of a running process in KB, -1 if unknown"""
    try:
        with open("/proc/%d/status" % pid) as f:
            m = re.search(r"^VmHWM:\s+(\d+) kB", f.read(), re.M)
            return int(m.group(1)) if m else -1
    except OSError:
        return -1


def sanitizer_findings(log_path):
    """(error reports, leak records) in a server log"""
    errors = leaks = 0
    try:
        with open(log_path, errors="replace") as f:
            for ln in f:
                leaks += ln.startswith(("Direct leak of", "Indirect leak of"))
                errors += sum(m in ln for m in _ERROR_MARKS)
    except OSError:
        pass
    return errors, leaks


def line(scenario, load, faults, exit_status, log_path, max_rss, bad_inputs=0, lost_writes=None):
    """crashes: the sanitizer error reports in the log, or 1 when the server
    exited non-zero (or was killed) without any report; leaks: LeakSanitizer
    records.  lost_writes None prints n/a."""
    errors, leaks = sanitizer_findings(log_path)
    crashes = errors or (1 if exit_status != 0 and not leaks else 0)
    return ('RELIABILITY scenario="%s" load="%s" faults="%s" bad_inputs=%d crashes=%d leaks=%d '
            'lost_writes=%s max_rss_kb=%d' % (scenario, load, faults, bad_inputs, crashes, leaks,
                                              "n/a" if lost_writes is None else lost_writes,
                                              max_rss))
