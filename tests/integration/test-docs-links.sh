#!/bin/sh
# Every relative link in README.md and docs/*.md names a file of the tree,
# and every #anchor a heading of the page it points into (GitHub's rule:
# lower case, punctuation dropped, spaces as hyphens), so moving a section
# cannot leave a link pointing nowhere.
. "$(dirname "$0")/lib.sh"
$PY - "$TOP" > "$WORK/links.txt" <<'EOF'
import os, re, sys
top = sys.argv[1]
pages = [os.path.join(top, "README.md")]
pages += sorted(os.path.join(top, "docs", f) for f in os.listdir(os.path.join(top, "docs"))
                if f.endswith(".md"))

def anchors(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    seen = set()
    for line in text.splitlines():
        m = re.match(r"#{1,6} (.*)", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            seen.add(slug)
    return seen

for page in pages:
    text = open(page, encoding="utf-8").read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        where = os.path.relpath(page, top)
        if not os.path.exists(dest):
            print(f"BAD {where}: ({target}): no file {os.path.relpath(dest, top)}")
        elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
            print(f"BAD {where}: ({target}): no heading #{anchor} in {os.path.relpath(dest, top)}")
        else:
            print(f"OK {where}: {target}")
EOF
expect_eq "the link checker ran" 0 $?
expect_no_grep "every relative link resolves" '^BAD' "$WORK/links.txt"
grep '^BAD' "$WORK/links.txt" >&2
expect_grep "links were found at all" '^OK README.md: docs/user-guide.md' "$WORK/links.txt"
finish
