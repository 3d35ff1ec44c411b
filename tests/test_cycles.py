#!/usr/bin/env python3
"""test_cycles.py BUILD_DIR - no two source files of the libraries and the
command call into each other, directly or round a longer loop, and no file
of one of the command's jobs (cli/convert, repack, conform, preprocess)
calls into another job's folder, only into cli/common: reads which symbols
each object file defines and uses (nm) and looks for a cycle among the
files and for calls across jobs."""
import glob
import subprocess
import sys

objs = [o for o in glob.glob(sys.argv[1] + "/CMakeFiles/**/*.o", recursive=True)
        if "/rl_kernel_" not in o]
defines, uses = {}, {}
for o in objs:
    name = o.split(".dir/", 1)[-1][:-2]
    uses[name] = set()
    for line in subprocess.run(["nm", o], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDRB":
            defines[f[2]] = name
        elif len(f) == 2 and f[0] == "U":
            uses[name].add(f[1])
calls = {n: {defines[s] for s in u if defines.get(s, n) != n}
         for n, u in uses.items()}

# a depth-first walk: a file met again while still on the path closes a cycle
state, path, found = {}, [], []
def walk(n):
    state[n] = 1
    path.append(n)
    for m in sorted(calls[n]):
        if state.get(m) == 1:
            found.append(path[path.index(m):] + [m])
        elif m not in state:
            walk(m)
    path.pop()
    state[n] = 2
sys.setrecursionlimit(10000)
for n in sorted(calls):
    if n not in state:
        walk(n)
for c in found:
    print("cycle: " + " -> ".join(c))


def job(name):
    """The command's job folder a file is in, or None (main, common)."""
    parts = name.split("/")
    return parts[1] if len(parts) == 3 and parts[0] == "cli" and \
        parts[1] != "common" else None


across = [(n, m) for n in sorted(calls) for m in sorted(calls[n])
          if job(n) and job(m) and job(n) != job(m)]
for n, m in across:
    print(f"across jobs: {n} calls {m} (share it through cli/common)")
jobs = {job(n) for n in calls} - {None}
print(f"{len(calls)} files, {len(found)} cycles, {len(jobs)} command jobs, "
      f"{len(across)} calls across them")
found += across
if len(jobs) < 4:
    print("the command's job folders are missing: is this the build "
          "directory?")
    sys.exit(1)
if len(calls) < 40:
    print("too few object files: is this the build directory?")
    sys.exit(1)
sys.exit(1 if found else 0)
