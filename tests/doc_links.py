#!/usr/bin/python3
"""Checks that every relative link of the guide resolves.

For README.md and every Markdown file under docs/, kernels/, sim/ and prof_analysis/: each link or image
[text](target) whose target is not a URL must name a file or folder of the repository, and a
'#anchor' (on its own or after a Markdown file) must be a heading of that file (GitHub's rule:
lowercase, punctuation but '-' and '_' dropped, spaces to '-'). Links inside code are ignored.

Usage: doc_links.py [REPO_ROOT]   (default: the folder above this file's). Prints one line per
broken link and exits 1 if there is any; stdlib only.
"""
import os
import re
import sys

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")
INLINE_CODE = re.compile(r"`[^`]*`")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def guide_files(root):
    files = [os.path.join(root, "README.md")]
    for top in ("docs", "kernels", "sim", "prof_analysis"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            files += [os.path.join(dirpath, name) for name in sorted(filenames) if name.endswith(".md")]
    return files


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks."""
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line.strip()):
                in_fence = not in_fence
                continue
            if not in_fence:
                yield number, line


def slug(heading):
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen = {}
    out = set()
    for _, line in prose_lines(path):
        m = HEADING.match(line)
        if not m:
            continue
        s = slug(m.group(1))
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    return out


def check_file(root, path):
    problems = []
    for number, line in prose_lines(path):
        for target in LINK.findall(INLINE_CODE.sub("", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:, ...
                continue
            file_part, _, anchor = target.partition("#")
            where = f"{os.path.relpath(path, root)}:{number}: {target}"
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not resolved.startswith(os.path.abspath(root) + os.sep) and resolved != os.path.abspath(root):
                problems.append(f"{where}: points outside the repository")
                continue
            if not os.path.exists(resolved):
                problems.append(f"{where}: no such file")
                continue
            if anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                problems.append(f"{where}: no heading '#{anchor}' in {os.path.relpath(resolved, root)}")
    return problems


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    files = guide_files(root)
    problems = []
    links = 0
    for path in files:
        problems += check_file(root, path)
        links += sum(len(LINK.findall(INLINE_CODE.sub("", line))) for _, line in prose_lines(path))
    for p in problems:
        print(p)
    print(f"doc links: {links} links in {len(files)} files, {len(problems)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
