"""docs_check.py - the README's promises about itself, and every relative
link of the documentation (run by test/cli-docs.sh; standard library only).

  - README.md is a short guide: at most 400 lines, its first lines give the
    two commands that set up a fresh machine (tools/demo.sh, tools/test.sh,
    verbatim, in a sh block) and a "Quick start" heading comes within its
    first 60 lines;
  - the README links every page of docs/ (its table of contents);
  - every relative link in README.md, python/README.md and docs/*.md names
    a file or folder that exists, and a link into a Markdown file with
    #anchor names a heading of that file (GitHub's anchors: lower case,
    punctuation dropped, spaces to '-', -1, -2, ... for repeats) or an
    explicit <a id=...>/<a name=...>.

usage: python3 docs_check.py SOURCE_DIR   (exit 0: all hold; 1: each failure
on its own line)
       python3 docs_check.py --shown SOURCE_DIR 'CMD'   the output the README's
           console blocks show after `$ CMD`, times masked (exit 1: no such CMD)
       python3 docs_check.py --mask < OUTPUT            the same masking of OUTPUT
"""
import os
import re
import sys
import unicodedata

README_MAX_LINES = 400
QUICK_START_WITHIN = 60
SETUP_LINES = (
    "bash tools/demo.sh    # set up, build, profile the bundled example, print its tree",
    "bash tools/test.sh    # set up, build, run every test (C, shell, Python)",
)
SETUP_WITHIN = 8

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HTML_ANCHOR = re.compile(r"<a\s+(?:[^>]*\s)?(?:id|name)\s*=\s*\"([^\"]+)\"", re.I)
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")


def prose_lines(text):
    """(line number, line) of the lines outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark[0] * len(mark)
                continue
            if mark.startswith(fence):
                fence = None
                continue
        if fence is None:
            yield n, line


def drop_code_spans(line):
    """The line without its `code spans` (links inside them are text)."""
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", line)


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.strip().lower()
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in "-_" or cat[0] in "LN" or cat == "Mn":
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)


def anchors(text):
    """Every anchor a Markdown file offers."""
    seen = {}
    found = set()
    for _, line in prose_lines(text):
        m = HEADING.match(line)
        if m:
            base = slug(m.group(2))
            k = seen.get(base, 0)
            seen[base] = k + 1
            found.add(base if k == 0 else f"{base}-{k}")
        for a in HTML_ANCHOR.findall(line):
            found.add(a)
    return found


def links(text):
    """(line number, target) of every link and image outside code."""
    for n, line in prose_lines(text):
        bare = drop_code_spans(line)
        for m in LINK.finditer(bare):
            yield n, m.group(1)
        m = REF_DEF.match(bare)
        if m:
            yield n, m.group(1)


def check_links(src, rel, text, cache, fail):
    here = os.path.dirname(os.path.join(src, rel))
    for n, target in links(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
            continue  # http:, https:, mailto: ...
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(here, path)) if path else os.path.join(src, rel)
        if not os.path.exists(full):
            fail(f"{rel}:{n}: link to a missing file: {target}")
            continue
        if not anchor or not full.endswith(".md") or not os.path.isfile(full):
            continue
        if full not in cache:
            with open(full, encoding="utf-8") as f:
                cache[full] = anchors(f.read())
        if anchor not in cache[full]:
            fail(f"{rel}:{n}: link to a missing anchor: {target} "
                 f"(no heading of {os.path.relpath(full, src)} gives #{anchor})")


def check_readme(src, text, fail):
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if len(lines) > README_MAX_LINES:
        fail(f"README.md: {len(lines)} lines, more than {README_MAX_LINES} "
             "(reference material goes to docs/)")
    if not any(re.match(r"^#{1,6}\s+Quick start\b", l) for l in lines[:QUICK_START_WITHIN]):
        fail(f"README.md: no 'Quick start' heading in its first {QUICK_START_WITHIN} lines")
    top = lines[:SETUP_WITHIN]
    for want in SETUP_LINES:
        if want not in top:
            fail(f"README.md: its first {SETUP_WITHIN} lines lose the set-up command: {want}")
    if not any(l.strip() in ("```sh", "```bash", "```shell") for l in top):
        fail(f"README.md: the set-up commands are not in a sh block in its first {SETUP_WITHIN} lines")
    for script in ("tools/demo.sh", "tools/test.sh"):
        if not os.path.isfile(os.path.join(src, script)):
            fail(f"README.md: its set-up command names {script}, which does not exist")
    linked = {os.path.normpath(t.partition("#")[0]) for _, t in links(text)}
    for page in sorted(os.listdir(os.path.join(src, "docs"))):
        if page.endswith(".md") and os.path.join("docs", page) not in linked:
            fail(f"README.md: docs/{page} is not in its table of contents")


def masked(lines):
    """Output lines with times, pids and sizes masked, blank ones dropped;
    runs of spaces count as one (a time one digit longer widens its
    column)."""
    out = [re.sub(r"\d+\.\d+|pid \d+|\(\d+ KiB\)", "#", l) for l in lines]
    out = [re.sub(r" +", " ", l).rstrip() for l in out]
    return [l for l in out if l]


def shown(text, cmd):
    """The output lines the README's console blocks show after `$ cmd`."""
    found = None
    for block in re.findall(r"^```console\n(.*?)^```\n", text, re.S | re.M):
        out = None
        for line in block.splitlines():
            if line.startswith("$ "):
                out = [] if line[2:] == cmd else None
                if out is not None:
                    found = out
            elif out is not None:
                out.append(line)
    return found


def main():
    if sys.argv[1:2] == ["--mask"]:
        print("\n".join(masked(sys.stdin.read().splitlines())))
        return 0
    if sys.argv[1:2] == ["--shown"]:
        with open(os.path.join(sys.argv[2], "README.md"), encoding="utf-8") as f:
            out = shown(f.read(), sys.argv[3])
        if out is None:
            print(f"README.md shows no `$ {sys.argv[3]}`", file=sys.stderr)
            return 1
        print("\n".join(masked(out)))
        return 0
    src = sys.argv[1] if len(sys.argv) > 1 else os.environ["KSCOPE_SOURCE_DIR"]
    failures = []
    fail = failures.append
    pages = ["README.md", os.path.join("python", "README.md")]
    pages += sorted(os.path.join("docs", p) for p in os.listdir(os.path.join(src, "docs"))
                    if p.endswith(".md"))
    cache = {}
    for rel in pages:
        with open(os.path.join(src, rel), encoding="utf-8") as f:
            text = f.read()
        if rel == "README.md":
            check_readme(src, text, fail)
        check_links(src, rel, text, cache, fail)
    for line in failures:
        print("FAIL: " + line)
    if failures:
        return 1
    print(f"docs: {len(pages)} pages, README and links as promised")
    return 0


if __name__ == "__main__":
    sys.exit(main())
