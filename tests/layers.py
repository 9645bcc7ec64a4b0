#!/usr/bin/env python3
"""
layers: the server's folders call downward only (docs/ARCHITECTURE.md, "The layers").

The folder dependency graph is derived from the #include lines of server/:
a file of folder F that includes header H depends on the folder that
implements H.  A header lives with its module: server/<folder>/x.h is that
folder's; include/percore/x.h belongs to the folder whose .c files define
what it declares (its functions and extern objects).  A header that declares
nothing defined anywhere (types and inline functions only) adds no edge.  A
public header's own #include lines count as its folder's.

It fails on
  - a header that two folders implement (one header per module),
  - an edge from a folder to one above it in LAYERS (an upward call),
  - any cycle in the graph (reported even where no order is settled),
  - a command's name compared or looked up in server/core/ (strcmp(cmd->name,
    "exec"), command_lookup("watch", 5), command_internal("__lock")): the
    core knows commands by the flags and routes of the table, and the
    commands it sends as steps by command.h's objects (NAME_EXEMPT lists the
    few places that parse a protocol frame off the command path, and why).

Usage: layers.py [repo root]   (default: this file's ../)
"""
import os
import re
import sys

# bottom to top: a folder may include the headers of those before it only
LAYERS = ["base", "proto", "store", "config", "cmd", "core", "admin", "main"]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
COMMENT = re.compile(r"/\*.*?\*/", re.S)
# a command table's entry: {"get", cmd_get, ...}, [ID] = {"exec", ...}, CMD("ping", ...), SUB("config", "get", ...)
TABLE_ENTRY = re.compile(r'(?:^\s*(?:\[\w+\] = )?\{|\b(?:CMD|SUB)\()"([a-z_|-]+)",', re.M)
# a string literal compared with, or looked up as, a name
NAME_TEST = re.compile(r'\b(strn?(?:case)?cmp|util_eq_nocase|command_lookup|command_internal)\s*\([^;]*?"([a-z_|-]+)"')
# names compared outside the command path, on purpose: (file, name) -> why
NAME_EXEMPT = {
    ("core/primary.c", "replconf"): "the sender thread reads a replica's REPLCONF ACK frames off its socket; "
                                    "no command runs there",
}
# what a header declares: a function's or an extern object's name, before its ( or [ or ;
DECLARATION = re.compile(r"^(?!\s|#|static|_Static_assert|typedef|struct \w+ \{|enum|union|\})[^;{}(\n]*?\b(\w+)\s*(?:\(|\[[^]\n]*\]\s*;|;)", re.M)
# what a .c defines: at the start of a line, not static, the name before ( or [ or =
DEFINITION = re.compile(r"^(?!static|_Static_assert|#|\s|/|\*|typedef|struct \w+ \{|enum|union|\})[^;{}(=\n]*?\b(\w+)\s*(?:\(|\[[^]\n]*\]\s*=|=)", re.M)


def includes(path):
    with open(path, encoding="utf-8") as f:
        return INCLUDE.findall(f.read())


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    server = os.path.join(root, "server")
    files = {}  # path relative to server/ -> (folder, [includes])
    for dirpath, _, names in os.walk(server):
        for n in sorted(names):
            if not n.endswith((".c", ".h")):
                continue
            p = os.path.join(dirpath, n)
            rel = os.path.relpath(p, server)
            folder = os.path.dirname(rel) or "main"
            files[rel] = (folder, includes(p))

    errors = []
    owner = {}  # header as included -> folder
    for rel, (folder, _) in files.items():
        if rel.endswith(".h"):
            owner[os.path.basename(rel)] = folder  # "core.h", as its folder's files include it
    defined = {}  # symbol -> folders whose .c define it
    for rel, (folder, _) in files.items():
        if rel.endswith(".c"):
            with open(os.path.join(server, rel), encoding="utf-8") as f:
                for name in DEFINITION.findall(f.read()):
                    defined.setdefault(name, set()).add(folder)
    public = os.path.join(root, "include")
    for dirpath, _, names in os.walk(public):
        for n in sorted(names):
            if not n.endswith(".h"):
                continue
            h = os.path.relpath(os.path.join(dirpath, n), public)
            with open(os.path.join(dirpath, n), encoding="utf-8") as f:
                text = COMMENT.sub("", f.read())
            folders = set()
            for name in DECLARATION.findall(text):
                folders |= defined.get(name, set())
            if len(folders) > 1:
                errors.append("%s is implemented by several folders: %s" % (h, ", ".join(sorted(folders))))
            if folders:
                owner[h] = sorted(folders, key=lambda f: LAYERS.index(f) if f in LAYERS else -1)[-1]
    # a public header's own includes count for the folder it belongs to
    for dirpath, _, names in os.walk(public):
        for n in sorted(names):
            h = os.path.relpath(os.path.join(dirpath, n), public)
            if n.endswith(".h") and h in owner:
                files["../include/" + h] = (owner[h], includes(os.path.join(dirpath, n)))

    edges = {}  # (from, to) -> the "file includes header" lines that make it
    for rel, (folder, incs) in sorted(files.items()):
        for h in incs:
            if h not in owner:
                continue
            to = owner[h]
            if to != folder:
                edges.setdefault((folder, to), []).append("%s includes %s" % (rel, h))

    rank = {name: i for i, name in enumerate(LAYERS)}
    for (a, b), why in sorted(edges.items()):
        if a not in rank or b not in rank:
            errors.append("folder %s is not in LAYERS (%s)" % (a if a not in rank else b, why[0]))
        elif rank[b] > rank[a]:
            errors.append("upward edge %s -> %s: %s" % (a, b, "; ".join(why)))

    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    cycles = set()

    def walk(node, path):
        for nxt in sorted(graph.get(node, ())):
            if nxt in path:
                cyc = path[path.index(nxt):]
                i = cyc.index(min(cyc))
                cycles.add(tuple(cyc[i:] + cyc[:i]))
            elif len(path) < len(graph) + 1:
                walk(nxt, path + [nxt])

    for start in sorted(graph):
        walk(start, [start])
    for cyc in sorted(cycles):
        errors.append("cycle: %s" % " -> ".join(cyc + (cyc[0],)))

    names = set()  # every command of the tables in cmd/ and admin/
    for rel in files:
        if rel.endswith(".c") and files[rel][0] in ("cmd", "admin"):
            with open(os.path.join(server, rel), encoding="utf-8") as f:
                names |= set(TABLE_ENTRY.findall(f.read()))
    for rel in sorted(files):
        if files[rel][0] != "core" or not rel.endswith(".c"):
            continue
        with open(os.path.join(server, rel), encoding="utf-8") as f:
            text = COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), f.read())
        for m in NAME_TEST.finditer(text):
            if m.group(2) in names and (rel, m.group(2)) not in NAME_EXEMPT:
                line = text.count("\n", 0, m.start()) + 1
                errors.append('%s:%d decides by the command name "%s" (%s)' % (rel, line, m.group(2), m.group(1)))

    for a in LAYERS:
        if a in graph:
            print("%-7s -> %s" % (a, " ".join(sorted(graph[a], key=lambda f: rank.get(f, -1)))))
    if errors:
        for e in errors:
            print("layers: " + e, file=sys.stderr)
        return 1
    print("layers: %d folders, %d edges, all downward" % (len({f for f, _ in files.values()}), len(edges)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
