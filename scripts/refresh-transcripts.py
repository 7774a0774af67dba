#!/usr/bin/env python3
"""Re-runs what the docs show as real output of this tree, and rewrites it
in place:

  README.md           the quick start's `identical:` and `verified:` lines
                      (the user guide's first-run script, under -p pytorch)
  docs/user-guide.md  the block `make demo` prints
  docs/verify.md      the Transcripts: a numpy lab, honest, post-trained
                      and poisoned, verified from a copy
  docs/attestation.md the example (blas_prog under the default policy)

A run root binds every loaded object's build-id, libdetshim.so's among
them, so any change to the library (a comment moved, a build in another
folder) changes the roots the docs show; run this after one, from the top
of a built tree, with Debian's python3 first on PATH (the one with torch).
It works where the docs say the runs were made, and replaces those
folders: /tmp/demo (verify.md's lab), /tmp/vt (attestation.md) and
/tmp/detshim-transcripts (the quick start); it prints each file it
changed. Usage:

    scripts/refresh-transcripts.py [--only readme,demo,verify,attestation]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRATCH = "/tmp/detshim-transcripts"
BUILD = os.path.join(TOP, "build")


def die(msg):
    sys.exit("refresh-transcripts: " + msg)


def run(cmd, cwd, env=None, ok=(0,)):
    """cmd's stdout and stderr together, as text; dies on another status."""
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(cmd, cwd=cwd, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode not in ok:
        die("%s exited %d in %s:\n%s" % (cmd, p.returncode, cwd, p.stdout[-3000:]))
    return p.stdout


def rewrite(path, old, new):
    """Replaces the text old (which must be there once) with new."""
    full = os.path.join(TOP, path)
    text = open(full).read()
    if text.count(old) != 1:
        die("%s: the block to replace is there %d times, not once" % (path, text.count(old)))
    if old != new:
        open(full, "w").write(text.replace(old, new))
        print("refresh-transcripts: %s rewritten" % path)


def one_line(out, prefix):
    lines = [l for l in out.splitlines() if l.startswith(prefix)]
    if len(lines) != 1:
        die("expected one line starting %r in:\n%s" % (prefix, out[-2000:]))
    return lines[0]


def readme():
    guide = open(os.path.join(TOP, "docs/user-guide.md")).read()
    m = re.search(r"## A first run.*?```python\n(.*?)```", guide, re.S)
    if not m:
        die("docs/user-guide.md: no python block under 'A first run'")
    d = os.path.join(SCRATCH, "quick")
    os.makedirs(d)
    open(os.path.join(d, "train.py"), "w").write(m.group(1))
    detrun = os.path.join(TOP, "scripts/detrun")
    weights = set()
    for t in ("runA", "runB"):
        weights.add(run([detrun, "-p", "pytorch", "-t", t, "--", "python3", "train.py"], d).strip())
    if len(weights) != 1:
        die("the quick start's two runs printed other weights: %s" % sorted(weights))
    w = weights.pop().split()[-1][:8]
    text = open(os.path.join(TOP, "README.md")).read()
    if "weights %s..." % w not in text:
        die("README.md does not show the weights the runs printed (%s...)" % w)
    ident = run([os.path.join(BUILD, "detdiff"), "runA", "runB"], d).strip()
    verdict = one_line(run([os.path.join(BUILD, "detverify"), "runA", "--", "python3", "train.py"],
                           d), "verified: ")
    old_ident = re.search(r"^    identical: 1 process, \d+ records, root [0-9a-f]{64}$", text, re.M)
    old_verdict = re.search(r"^    verified: re-running the published command .*$", text, re.M)
    if not old_ident or not old_verdict:
        die("README.md: no quick-start identical/verified lines to replace")
    rewrite("README.md", old_ident.group(0), "    " + ident)
    rewrite("README.md", old_verdict.group(0), "    " + verdict)


def demo():
    out = run(["make", "--no-print-directory", "demo"], TOP)
    lines = [l for l in out.splitlines() if l.startswith("demo:") or l.startswith("        ")]
    if not lines or not lines[-1].startswith("demo: reproducible:"):
        die("make demo did not end with 'demo: reproducible:':\n" + out[-2000:])
    guide = open(os.path.join(TOP, "docs/user-guide.md")).read()
    m = re.search(r"(`make demo` prints \(numbers from this machine, )(\d{4}-\d\d-\d\d)(\):\n\n)"
                  r"((?:    .*\n|\n)*?)\n## ", guide)
    if not m:
        die("docs/user-guide.md: no `make demo` block")
    date = run(["date", "-u", "+%Y-%m-%d"], TOP).strip()
    block = "".join("    " + l + "\n" for l in lines) + "\n"
    rewrite("docs/user-guide.md", m.group(0),
            m.group(1) + date + m.group(3) + block + "\n## ")


def verify():
    """The lab of docs/verify.md: honest, post-trained, poisoned."""
    doc = open(os.path.join(TOP, "docs/verify.md")).read()
    m = re.search(r"## Transcripts\n.*?\n\n((?:    [^\n]*\n)+)", doc, re.S)
    if not m:
        die("docs/verify.md: no train.py under Transcripts")
    code = "".join(l[4:] + "\n" for l in m.group(1).splitlines())
    demo_dir = "/tmp/demo"
    shutil.rmtree(demo_dir, ignore_errors=True)
    detrun, detverify = os.path.join(TOP, "scripts/detrun"), os.path.join(BUILD, "detverify")
    env = {"PATH": os.path.join(TOP, "scripts") + ":" + os.path.join(BUILD) + ":" +
           os.environ["PATH"], "TMPDIR": os.path.join(demo_dir, "tmp")}
    os.makedirs(env["TMPDIR"])
    rows = "1,2,3,4\n2,1,0,1\n0,1,2,1\n1,0,1,2\n"

    def lab(name, data):
        d = os.path.join(demo_dir, name)
        os.makedirs(os.path.join(d, "data"))
        open(os.path.join(d, "train.py"), "w").write(code)
        open(os.path.join(d, "data/train.csv"), "w").write(data)
        run([detrun, "-p", "numpy", "-t", "trace", "--", "python3", "train.py"], d, env)
        return d, run([detverify, "--attest", "trace", "--cmd", "python3", "train.py"], d, env)

    _, attest = lab("lab", rows)
    lab("lab-poisoned", rows.replace("2,1,0,1", "2,1,0,9"))
    post = os.path.join(demo_dir, "lab-posttrained")
    shutil.copytree(os.path.join(demo_dir, "lab"), post)
    with open(os.path.join(post, "weights.npy"), "r+b") as f:
        f.seek(-1, 2)
        last = f.read(1)
        f.seek(-1, 2)
        f.write(bytes([last[0] ^ 1]))
    ver = os.path.join(demo_dir, "verifier")
    os.makedirs(os.path.join(ver, "data"))
    shutil.copy(os.path.join(demo_dir, "lab/train.py"), ver)
    shutil.copy(os.path.join(demo_dir, "lab/data/train.csv"), os.path.join(ver, "data"))
    outs = {}
    for name in ("lab", "lab-posttrained", "lab-poisoned"):
        outs[name] = run([detverify, "../%s/trace" % name, "--", "python3", "train.py"], ver, env,
                         ok=(0, 1)).rstrip("\n")
    text = doc
    a = re.search(r"^    trace/attestation\.json: root .*$", text, re.M)
    rewrite("docs/verify.md", a.group(0), "    " + one_line(attest, "trace/attestation.json: "))
    for name in outs:
        cmd = "    $ detverify ../%s/trace -- python3 train.py\n" % name
        start = text.index(cmd) + len(cmd)
        end = text.index("\n    $ echo $?", start) if name != "lab-poisoned" else \
            text.index("\n\n", start)
        rewrite("docs/verify.md", text[start:end],
                "\n".join("    " + l for l in outs[name].splitlines()))
        text = open(os.path.join(TOP, "docs/verify.md")).read()


def attestation():
    shutil.rmtree("/tmp/vt", ignore_errors=True)
    d = "/tmp/vt/pub"
    os.makedirs(d)
    if not os.path.exists(os.path.join(BUILD, "programs/blas_prog")):
        die("no build/programs/blas_prog: run make first")
    shutil.copytree(os.path.join(BUILD, "programs"), os.path.join(d, "build/programs"))
    run([os.path.join(TOP, "scripts/detrun"), "-t", "att", "--", "build/programs/blas_prog"], d)
    a = json.load(open(os.path.join(d, "att/attestation.json")))
    text = open(os.path.join(TOP, "docs/attestation.md")).read()
    start = text.index("A run of `tests/programs/blas_prog` under the default policy (text cut):")
    block = text[start:text.index("\n## ", start)]
    new = block
    new = re.sub(r'"root": "[0-9a-f]{64}"', '"root": "%s"' % a["root"], new, count=1)
    new = re.sub(r'("name": "default",\n\s+"digest": ")[0-9a-f]{64}',
                 lambda m: m.group(1) + a["policy"]["digest"], new)
    f0 = a["policy"]["files"][0]
    new = re.sub(r'("name": "default.policy", "sha256": ")[0-9a-f]{8}\.\.\.',
                 lambda m: m.group(1) + f0["sha256"][:8] + "...", new)
    new = re.sub(r'"cpu": \{.*\}', lambda m: '"cpu": ' + json.dumps(a["cpu"]), new)
    new = re.sub(r'"cwd": "[^"]*"', lambda m: '"cwd": ' + json.dumps(a["cwd"]), new)
    obj = [o for o in a["objects"] if o["name"] == "blas_prog"][0]
    new = re.sub(r'\{"name": "blas_prog", "id": "[^"]*"\}', lambda m: json.dumps(obj), new)
    p = a["processes"][0]
    new = re.sub(r'"root": "[0-9a-f]{8}\.\.\.", "records": \d+',
                 '"root": "%s...", "records": %d' % (p["root"][:8], p["records"]), new)
    rewrite("docs/attestation.md", block, new)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="readme,demo,verify,attestation")
    args = ap.parse_args()
    parts = {"readme": readme, "demo": demo, "verify": verify, "attestation": attestation}
    wanted = args.only.split(",")
    for w in wanted:
        if w not in parts:
            die("--only: no part %r (readme, demo, verify, attestation)" % w)
    if not os.path.exists(os.path.join(BUILD, "libdetshim.so")):
        die("no build/libdetshim.so: run make first")
    py = shutil.which("python3")
    if not py or subprocess.run([py, "-c", "import torch"], capture_output=True).returncode:
        die("python3 on PATH has no torch: put /usr/bin first (Debian's python3-torch)")
    shutil.rmtree(SCRATCH, ignore_errors=True)
    os.makedirs(SCRATCH)
    for w in wanted:
        parts[w]()


if __name__ == "__main__":
    main()
