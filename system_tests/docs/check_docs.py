#!/usr/bin/env python3
"""Runs every command shown with its output in README.md and docs/*.md and compares the output.

A shown session is a fenced code block whose first line starts with "$ ": each "$ " line is a command
(continued on the next line after a trailing backslash), the lines up to the next command its expected
output (stdout and stderr together, as a terminal shows them). The commands of one file run in order, in
one scratch folder per file that holds links to the repository's top-level entries and `build` (the built
tree), with the built `einrel` and the given python3 first on PATH and no OMP_* variables of the caller: they run as a reader
would type them from the repository's root after `bash cmake/quickstart.sh demo`.

Comparison: trailing blanks dropped, runs of blanks read as one, numbers with a fraction (times, rates,
errors) and the slowest rank's number read as <n>; a line "..." stands for any number of lines. An HTML comment right before a block
changes how it is treated:
    <!-- doc-test: skip: REASON -->   not run (e.g. it needs Open MPI's launcher or a GPU); REASON is required
    <!-- doc-test: numbers -->        every number reads as <n> (output whose every figure is the machine's)

--update rewrites each block with what its commands print, unless it matches and elides lines with "..."
(then review the diff).
Exit status 1 when any shown output differs, naming the file, line and first differing line.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

FENCE = re.compile(r"^(\s*)```")
MARKER = re.compile(r"<!--\s*doc-test:\s*(skip|numbers)(?::\s*(.*?))?\s*-->")
DECIMAL = re.compile(r"[-+]?\d+\.\d+(?:[eE][-+]?\d+)?|[-+]?\d+[eE][-+]?\d+")
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
# Integers that depend on timing: which rank was slowest (einrel run's timed rank).
TIMED = re.compile(r"(times of rank |\"timed_rank\": )\d+")


class Block:
    def __init__(self, path, start, end, lines, mode, reason):
        self.path, self.start, self.end, self.lines, self.mode, self.reason = path, start, end, lines, mode, reason

    def sessions(self):
        """[(command, its lines as shown, expected lines)] of this block."""
        out, i = [], 0
        while i < len(self.lines):
            line = self.lines[i]
            if not line.startswith("$ "):
                raise SystemExit(f"{self.path}:{self.start + 1 + i}: output before any command in a '$ ' block")
            command, shown = line[2:], [line]
            while command.endswith("\\") and i + 1 < len(self.lines):
                i += 1
                command = command[:-1] + " " + self.lines[i].strip()
                shown.append(self.lines[i])
            i += 1
            expected = []
            while i < len(self.lines) and not self.lines[i].startswith("$ "):
                expected.append(self.lines[i])
                i += 1
            out.append((command, shown, expected))
        return out


def blocks_of(path):
    text = open(path, encoding="utf-8").read().split("\n")
    blocks, i = [], 0
    while i < len(text):
        if FENCE.match(text[i]):
            j = i + 1
            while j < len(text) and not FENCE.match(text[j]):
                j += 1
            body = text[i + 1:j]
            if body and body[0].startswith("$ "):
                mode, reason = "default", None
                k = i - 1
                while k >= 0 and not text[k].strip():
                    k -= 1
                m = MARKER.search(text[k]) if k >= 0 else None
                if m:
                    mode, reason = m.group(1), m.group(2)
                    if mode == "skip" and not reason:
                        raise SystemExit(f"{path}:{k + 1}: a skipped block needs a reason (doc-test: skip: REASON)")
                blocks.append(Block(path, i, j, body, mode, reason))
            i = j + 1
        else:
            i += 1
    return blocks


def normalize(line, mode):
    line = TIMED.sub(r"\1<n>", " ".join(line.split()))
    return (NUMBER if mode == "numbers" else DECIMAL).sub("<n>", line)


def matches(expected, actual, mode):
    """Whether actual lines match expected ones ('...' matching any run of lines); else the first miss."""
    exp = [normalize(x, mode) for x in expected]
    act = [normalize(x, mode) for x in actual]

    def walk(i, j):
        if i == len(exp):
            return None if j == len(act) else (i, j)
        if exp[i] == "...":
            worst = (i, j)
            for k in range(j, len(act) + 1):
                miss = walk(i + 1, k)
                if miss is None:
                    return None
                worst = max(worst, miss)
            return worst
        if j < len(act) and exp[i] == act[j]:
            return walk(i + 1, j + 1)
        return (i, j)

    return walk(0, 0)


def scratch_folder(root, build, work, name):
    folder = os.path.join(work, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for entry in os.listdir(root):
        if entry.startswith(".") or entry.startswith("build"):
            continue
        os.symlink(os.path.join(os.path.abspath(root), entry), os.path.join(folder, entry))
    os.symlink(os.path.abspath(build), os.path.join(folder, "build"))
    return folder


def environment(build, work, python):
    """The caller's environment without OMP_*; the built einrel, and `python` as python3, first on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    tools = os.path.join(os.path.abspath(work), "bin")
    os.makedirs(tools, exist_ok=True)
    link = os.path.join(tools, "python3")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.abspath(python), link)
    env["PATH"] = os.pathsep.join([os.path.join(os.path.abspath(build), "drivers"), tools, env.get("PATH", "")])
    return env


def run(command, folder, env, timeout):
    done = subprocess.run(["bash", "-c", command], cwd=folder, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=timeout)
    return done.stdout.decode("utf-8", "replace").rstrip("\n").split("\n") if done.stdout.strip() else []


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", required=True, help="the repository")
    parser.add_argument("--build", required=True, help="the built tree")
    parser.add_argument("--work", required=True, help="where the scratch folders go")
    parser.add_argument("--update", action="store_true", help="rewrite the shown outputs")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per command")
    parser.add_argument("--python", default=sys.executable, help="the python3 the commands run (numpy, h5py)")
    parser.add_argument("files", nargs="*", help="markdown files (default: README.md and docs/*.md)")
    args = parser.parse_args()
    files = args.files or [os.path.join(args.root, "README.md")] + sorted(
        os.path.join(args.root, "docs", f) for f in os.listdir(os.path.join(args.root, "docs")) if f.endswith(".md"))
    env = environment(args.build, args.work, args.python)
    failures = checked = skipped = 0
    for path in files:
        blocks = blocks_of(path)
        if not blocks:
            continue
        folder = scratch_folder(args.root, args.build, args.work, os.path.basename(path).replace(".", "_"))
        text = open(path, encoding="utf-8").read().split("\n")
        rewritten = {}
        for block in blocks:
            if block.mode == "skip":
                skipped += 1
                print(f"skipped {os.path.relpath(path, args.root)}:{block.start + 1} ({block.reason})")
                continue
            new_lines, differs = [], False
            for command, shown, expected in block.sessions():
                actual = run(command, folder, env, args.timeout)
                checked += 1
                new_lines += shown + actual
                miss = matches(expected, actual, block.mode)
                differs = differs or miss is not None
                if miss is not None and not args.update:
                    failures += 1
                    i, j = miss
                    want = expected[i] if i < len(expected) else "(end of output)"
                    got = actual[j] if j < len(actual) else "(end of output)"
                    print(f"{os.path.relpath(path, args.root)}:{block.start + 2}: `{command}` prints other output\n"
                          f"  shown:   {want}\n  printed: {got}\n  whole output:\n    " + "\n    ".join(actual))
            # --update rewrites a block that differs, or shows other text (other column widths, other
            # decimals); one with "..." elisions that matches keeps its text.
            elided = any(line.strip() == "..." for line in block.lines)
            if differs or (not elided and new_lines != block.lines):
                rewritten[block.start] = (block.end, new_lines)
        if args.update:
            out, i = [], 0
            while i < len(text):
                if i in rewritten:
                    end, lines = rewritten[i]
                    out += [text[i]] + lines + [text[end]]
                    i = end + 1
                else:
                    out.append(text[i])
                    i += 1
            open(path, "w", encoding="utf-8").write("\n".join(out))
    print(f"doc test: {checked} command(s) checked, {skipped} block(s) skipped, {failures} differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
