#!/bin/bash
# cli-formats.sh - help texts name formats from the format table
# (src/format/format.h), so a format added to the table shows in every one:
#  - no help text or summary of src/cli/ names a format or an extension
#    itself (they use the table's words: {formats}, {tree_exts}, ...);
#  - every list of formats `kscope help CMD` prints is one the table
#    makes, in its order: every format's or one kind's names, extensions
#    they are written with, every extension they are read by, or the
#    extension a kind is written with by default.
source "$(dirname "$0")/read-lib.sh"

out=$(python3 - "$KSCOPE_SOURCE_DIR" "$KS" 2>&1 <<'PY'
import glob, re, subprocess, sys

src, ks = sys.argv[1], sys.argv[2]
text = open(src + "/src/format/format.h", encoding="utf-8").read()
rows = re.findall(r'X\(\s*\w+,\s*"([^"]*)",\s*KSCOPE__KIND_(TREE|TRACE),\s*"([^"]*)"', text)
table = [(name, kind.lower(), exts.split()) for name, kind, exts in rows]
assert table, "no row found in format.h"
names = {n for n, _, _ in table}
exts = {e for _, _, es in table for e in es}
words = sorted(names | exts, key=len, reverse=True)
token = r"(?<![\w.])(?:%s)(?![\w])" % "|".join(re.escape(w) for w in words)

# what the table makes: lists of names, first extensions, every extension
made = []
for kind in (None, "tree", "trace"):
    rows_k = [r for r in table if kind in (None, r[1])]
    made.append([n for n, _, _ in rows_k])
    made.append([es[0] for _, _, es in rows_k])
    made.append([e for _, _, es in rows_k for e in es])
    if kind:
        made.append([rows_k[0][2][0]])

bad = []
for path in sorted(glob.glob(src + "/src/cli/*.c")):
    code = open(path, encoding="utf-8").read()
    for m in re.finditer(r"const char (cmd_\w+_(?:help|summary))\[\] =((?:\s*\"(?:[^\"\\]|\\.)*\")+);", code):
        literal = "".join(re.findall(r"\"((?:[^\"\\]|\\.)*)\"", m.group(2)))
        for w in re.findall(token, literal):
            bad.append("%s: %s names '%s' itself" % (path.split("/")[-1], m.group(1), w))

cmds = re.findall(r"^  ([a-z]+) ", subprocess.run([ks, "help"], capture_output=True, text=True).stdout, re.M)
assert len(cmds) >= 10, cmds
seen = 0
for c in cmds:
    help_text = subprocess.run([ks, "help", c], capture_output=True, text=True).stdout
    flat = re.sub(r"\s+", " ", help_text)
    for m in re.finditer(r"%s(?:(?:, | or )%s)*" % (token, token), flat):
        items = re.findall(token, m.group(0))
        seen += 1
        if items not in made:
            bad.append("kscope help %s: '%s' is no list of the table's" % (c, m.group(0)))
print("%d lists in %d help texts" % (seen, len(cmds)))
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY
) && ok "help texts: the table's formats ($out)" || fail "help texts: $out"
finish
