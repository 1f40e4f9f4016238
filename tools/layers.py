#!/usr/bin/env python3
"""The import structure of host/: circles of files, and imports that run up the layers.

    python3 tools/layers.py            # circles of more than two files, upward imports
    python3 tools/layers.py --edges    # and every import between folders

A file imports another when its code (comments left out) names a path into it
(`crate::a::b`, `super::x`, `self::y`), or an item that host/lib.rs re-exports from it
(`crate::Runtime`). Modules compiled for tests only (`#[cfg(test)] mod tests`) are left out. The layers, top down, are LAYERS
below: an import from a folder to one listed above it runs up. Exit status 1 if any
circle of more than two files or any upward import is found.
"""
import collections
import os
import re
import sys

LAYERS = ["lib", "multi", "runtime", "stream", "queue", "image", "memory", "backend", "driver", "util", "error"]
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host")


def module_of(rel):
    m = rel[:-3]
    if m.endswith("/mod"):
        m = m[:-4]
    return "" if m == "lib" else m.replace("/", "::")


def without_tests(src):
    """`src` without its inline modules compiled for tests only (`#[cfg(test)]`,
    `#[cfg(all(test, loom))]`, ...)."""
    while True:
        m = re.search(r"#\[cfg\([^\]]*\btest\b[^\]]*\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod \w+\s*\{", src)
        if not m:
            return src
        depth, k = 0, m.end() - 1
        while k < len(src):
            depth += {"{": 1, "}": -1}.get(src[k], 0)
            if depth == 0:
                break
            k += 1
        src = src[: m.start()] + src[k + 1 :]


def load():
    files = {}
    for dp, _, fs in os.walk(ROOT):
        for f in fs:
            if f.endswith(".rs") and not (dp == ROOT and f == "build.rs"):
                rel = os.path.relpath(os.path.join(dp, f), ROOT)
                src = re.sub(r"//[^\n]*", "", open(os.path.join(dp, f)).read())
                files[module_of(rel)] = without_tests(src)
    return files


def imports(files):
    mods = set(files)
    reexports = {}
    for m in re.finditer(r"pub use ([\w:]+)::\{([^}]*)\};", files[""]):
        for item in re.findall(r"\w+", m.group(2)):
            reexports[item] = m.group(1)
    for m in re.finditer(r"pub use ([\w:]+)::(\w+);", files[""]):
        reexports[m.group(2)] = m.group(1)

    def longest(parts):
        best = None
        for i in range(len(parts) + 1):
            if "::".join(parts[:i]) in mods:
                best = "::".join(parts[:i])
        return best

    def resolve(cur, head, tail):
        if head == "crate":
            base = []
            if tail and tail[0] in reexports and not reexports[tail[0]].startswith("resident"):
                return longest(reexports[tail[0]].split("::"))
        elif head == "super":
            base = cur.split("::")[:-1] if cur else []
            while tail and tail[0] == "super":
                base, tail = base[:-1], tail[1:]
        else:
            base = cur.split("::") if cur else []
        return longest(base + tail)

    edges = collections.defaultdict(set)
    for cur, src in files.items():
        for m in re.finditer(r"\b(crate|super|self)((?:::\w+)+)", src):
            t = resolve(cur, m.group(1), [p for p in m.group(2).split("::") if p])
            if t not in (None, "", cur):
                edges[cur].add(t)
        for m in re.finditer(r"use (crate|super)::\{([^;]*)\};", src, re.S):
            for item in re.findall(r"\w+(?:::\w+)*", m.group(2)):
                t = resolve(cur, m.group(1), item.split("::"))
                if t not in (None, "", cur):
                    edges[cur].add(t)
    return edges


def circles(mods, edges):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(mods):
        if v not in index:
            visit(v)
    return [c for c in out if len(c) > 2]


def main():
    files = load()
    edges = imports(files)
    rank = {name: i for i, name in enumerate(LAYERS)}
    top = lambda m: m.split("::")[0] if m else "lib"
    bad = 0
    for c in sorted(circles(files, edges), key=len, reverse=True):
        print(f"circle of {len(c)} files: {', '.join(c)}")
        bad += 1
    for a in sorted(edges):
        for b in sorted(edges[a]):
            ta, tb = top(a), top(b)
            if ta != tb and rank.get(ta, 0) >= rank.get(tb, 0):
                print(f"upward: {a} -> {b}")
                bad += 1
    if "--edges" in sys.argv:
        folders = collections.defaultdict(set)
        for a, bs in edges.items():
            for b in bs:
                if top(a) != top(b):
                    folders[top(a)].add(top(b))
        for a in sorted(folders, key=lambda f: rank.get(f, 0)):
            print(f"{a} -> {', '.join(sorted(folders[a], key=lambda f: rank.get(f, 0)))}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
