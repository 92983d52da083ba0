#!/usr/bin/env python3
"""Import cycles between the top-level modules of each crate (issue 22: "no import cycle").

For every crate under crates/, each top-level module (src/NAME.rs or src/NAME/) is a node, and
an edge A -> B means some file of A names `crate::B` (in a `use` or a path). The crate root
(lib.rs/main.rs) is not a node: it declares and re-exports the modules. Comments (doc links) and tests (tests.rs files,
`tests/` folders, and `#[cfg(test)]` modules from that line on) are left out: a test may use any
sibling. Prints every cycle (a strongly connected set of two or more modules) and exits 1 if
there is one.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates")
PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")
GROUP = re.compile(r"\buse\s+crate::\{([^;]*)\}", re.S)


def production_text(path):
    text = open(path, encoding="utf-8").read()
    cut = text.find("#[cfg(test)]")
    text = text if cut < 0 else text[:cut]
    # Comments (doc links among them) name modules without depending on them.
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def crate_graph(src):
    modules = {}
    for entry in os.listdir(src):
        full = os.path.join(src, entry)
        if entry in ("lib.rs", "main.rs", "tests.rs") or entry.startswith("."):
            continue
        if entry.endswith(".rs"):
            modules[entry[:-3]] = [full]
        elif os.path.isdir(full):
            files = []
            for d, dirs, names in os.walk(full):
                dirs[:] = [x for x in dirs if x != "tests"]
                files += [os.path.join(d, n) for n in names if n.endswith(".rs") and n != "tests.rs"]
            modules[entry] = files
    edges = {m: set() for m in modules}
    for m, files in modules.items():
        for f in files:
            text = production_text(f)
            names = set(PATH.findall(text))
            for group in GROUP.findall(text):
                names |= set(re.findall(r"(?:^|,)\s*([a-z_][a-z0-9_]*)", group))
            edges[m] |= {n for n in names if n in modules and n != m}
    return edges


def cycles(edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                out.append(sorted(scc))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    found = False
    for crate in sorted(os.listdir(ROOT)):
        src = os.path.join(ROOT, crate, "src")
        if not os.path.isdir(src):
            continue
        edges = crate_graph(src)
        for scc in cycles(edges):
            found = True
            detail = "; ".join(f"{m} -> {', '.join(sorted(edges[m] & set(scc)))}" for m in scc)
            print(f"{crate}: import cycle between {', '.join(scc)} ({detail})")
    if not found:
        print("no import cycle between the top-level modules of any crate")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
