#!/usr/bin/env python3
"""The include graph between the folders of src/, from the #include lines.

    scripts/include_graph.py          prints the edges (with how many lines make
                                      each) and the folders in layers, lowest first
    scripts/include_graph.py --check  the same, and exits 1 when the folders
                                      include each other in a circle

An include "x/y.h" is looked up beside the including file, then under src/;
one found in neither (<stdio.h>, "seqmatch.h" from include/) is not an edge.
A folder is the first component under src/ (src/engines/kmer/ is engines).
docs/architecture.md ("Layers") shows the graph this prints.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = (".c", ".h", ".cu", ".cuh")


def folder_edges(src):
    edges = {}
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith(SOURCES):
                continue
            path = os.path.join(root, name)
            here = os.path.relpath(path, src).split(os.sep)[0]
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                for base in (root, src):
                    target = os.path.normpath(os.path.join(base, inc))
                    if os.path.isfile(target):
                        break
                else:
                    continue
                rel = os.path.relpath(target, src)
                if rel.startswith(".."):
                    continue
                there = rel.split(os.sep)[0]
                if there != here:
                    edges.setdefault((here, there), []).append(os.path.relpath(path, src) + " -> " + rel)
    return edges


def cycles(nodes, edges):
    """Strongly connected components of more than one folder (Tarjan)."""
    succ = {n: sorted(b for (a, b) in edges if a == n) for n in nodes}
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
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
            if len(comp) > 1:
                out.append(sorted(comp))

    for n in sorted(nodes):
        if n not in index:
            visit(n)
    return out


def layers(nodes, edges):
    """Each folder's layer: 0 includes no other folder, else 1 + the highest
    layer it includes (None for the folders of a circle)."""
    level = {}
    for _ in nodes:
        for n in nodes:
            below = [b for (a, b) in edges if a == n]
            if all(b in level for b in below):
                level[n] = 1 + max((level[b] for b in below), default=-1)
    return level


def main(argv):
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    src = os.path.normpath(src)
    nodes = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    edges = folder_edges(src)
    for (a, b), lines in sorted(edges.items()):
        print(f"{a} -> {b}  ({len(lines)})")
    if "--verbose" in argv:
        for (a, b), lines in sorted(edges.items()):
            for line in lines:
                print(f"  {a} -> {b}: {line}")
    level = layers(nodes, edges)
    for lv in sorted(set(level.values())):
        print(f"layer {lv}: " + " ".join(n for n in nodes if level.get(n) == lv))
    found = cycles(nodes, edges)
    for comp in found:
        print("circle: " + " ".join(comp) + " include each other")
        for (a, b), lines in sorted(edges.items()):
            if a in comp and b in comp:
                print(f"  {a} -> {b}: {lines[0]}" + (f" (+{len(lines) - 1})" if len(lines) > 1 else ""))
    if "--check" in argv and found:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
