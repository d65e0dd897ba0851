#!/usr/bin/env python3
"""doc_blocks_test.py - every shell and INI block of the documentation runs as written.

    doc_blocks_test.py --source-dir REPO --build-dir BUILD [--list] [--only SUBSTRING] [DOC...]
    doc_blocks_test.py --source-dir REPO --check-links [DOC...]

DOC defaults to README.md, docs/*.md and examples/*/README.md (relative to REPO). From
each, the fenced blocks tagged ```sh, ```bash, ```console and ```ini are taken in order:

  sh, bash  the block is the script.
  console   the lines that start with "$ " are the commands (a line ending in a
            backslash continues on the next one); the other lines are output, not run.
  ini       written to the file the block names in its first line (a comment
            "; NAME.ini"), then loaded by what its sections are: [adapter ...] with
            `SOFTNDK_CONFIG=NAME softndk devices`, fault sections (kind = ...) with
            `SOFTNDK_FAULTS=NAME softndk devices`, a [profile] through an adapter that
            uses it (`profile = ./NAME`). Either must exit 0; a load error fails.

How blocks run. Each document gets a scratch copy of the source tree (without build/ or
.git) in a temporary directory, with build/default a symlink to BUILD, so the paths the
documents use (build/default/tools/softndk/softndk, scripts/..., profiles/...) resolve
and whatever a block writes stays in the scratch copy. BUILD/tools/softndk is first on
PATH (the installed `softndk`). The blocks of one document run in order in that
directory, each under `bash -e -o pipefail` in a process group of its own, with a
timeout (60 s); the shell variables a block sets are there for the next ones (the
documents' `softndk=...` lines). SOFTNDK_SOCKET and XDG_RUNTIME_DIR point into the
scratch directory, so a daemon a block starts (`softndk rnic --detach`, which returns
once the daemon listens) is private; after each block its process group is killed and
a daemon still answering on that socket is stopped. Output goes to files, never to a
pipe a detached daemon could hold open.

--check-links runs nothing: every relative Markdown link of the documents must name a
file inside REPO that exists, and no text may point outside the repository (a path that
climbs above REPO with ../, or an absolute /work/ or /home/ path): the repository
stands on its own. Here DOC defaults to the list above plus every other */README.md.

Markers. An HTML comment on the line before the opening fence (blank lines between are
allowed) changes how a block is treated:
  <!-- doc-test: skip: REASON -->   not run; listed with its reason (install steps that
                                      need root, whole-tree builds, ...).
A skip without a reason is an error, so every skip says why.

Exit status: 0 every block passed (skips are listed), 1 a block failed (its script and
output are printed), 2 usage error or a malformed document (an unclosed fence, an INI
block without a name).
"""
import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BLOCK_TIMEOUT_S = 60
RUN_TAGS = {"sh", "bash", "shell", "console", "ini"}
FENCE = re.compile(r"^(\s*)(```+)\s*([\w+-]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*doc-test:\s*(.*?)\s*-->\s*$")


class DocError(Exception):
    pass


class Block:
    def __init__(self, doc, line, tag, text, marker):
        self.doc = doc
        self.line = line  # 1-based line of the opening fence
        self.tag = tag
        self.text = text
        self.marker = marker  # the doc-test marker's text, or None

    @property
    def where(self):
        return f"{self.doc}:{self.line} ({self.tag})"

    def skip_reason(self):
        if self.marker is None:
            return None
        m = re.fullmatch(r"skip:\s*(.*)", self.marker)
        if not m:
            raise DocError(f"{self.where}: unknown doc-test marker '{self.marker}'")
        if not m.group(1):
            raise DocError(f"{self.where}: a skip needs a reason: <!-- doc-test: skip: WHY -->")
        return m.group(1)


def extract_blocks(doc, path):
    """Every fenced block of `path` whose tag is run; others (cmake, c, text) are skipped
    silently, as they are not commands."""
    blocks = []
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, tag = m.group(1), m.group(2), m.group(3).lower()
        start = i
        body = []
        i += 1
        while i < len(lines):
            close = FENCE.match(lines[i])
            if close and close.group(2) == fence and not close.group(3):
                break
            # A list item's block is indented; the indentation is not part of it.
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        else:
            raise DocError(f"{doc}:{start + 1}: the ``` block is never closed")
        i += 1
        if tag not in RUN_TAGS:
            continue
        marker = None
        j = start - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        if j >= 0:
            mm = MARKER.match(lines[j])
            if mm:
                marker = mm.group(1)
        blocks.append(Block(doc, start + 1, tag, "\n".join(body) + "\n", marker))
    return blocks


def console_commands(text):
    """The commands of a console block: '$ ' lines and their backslash continuations."""
    commands = []
    continuing = False
    for line in text.split("\n"):
        if continuing:
            commands[-1] += "\n" + line
        elif line.startswith("$ "):
            commands.append(line[2:])
        else:
            continue
        continuing = line.rstrip().endswith("\\")
    return "\n".join(commands) + "\n"


def ini_script(block):
    """The shell script that writes an INI block to its file and loads it."""
    first = block.text.lstrip("\n").split("\n", 1)[0]
    m = re.fullmatch(r"\s*[;#]\s*(\S+\.ini)\s*", first)
    if not m:
        raise DocError(
            f"{block.where}: an INI block names its file in its first line, e.g. '; softndk.ini'")
    name = m.group(1)
    sections = re.findall(r"^\s*\[([^\]]+)\]", block.text, re.M)
    if any(s.startswith("adapter ") for s in sections):
        load = f"SOFTNDK_CONFIG={name} softndk devices -v"
    elif re.search(r"^\s*kind\s*=", block.text, re.M):
        load = f"SOFTNDK_FAULTS={name} softndk devices"
    elif "profile" in sections:
        load = (f"printf '[adapter rnic0]\\nif_index = 1\\nipv4 = 127.0.0.1\\nprofile = ./{name}\\n'"
                f" > doc-test-profile-user.ini\n"
                f"SOFTNDK_CONFIG=doc-test-profile-user.ini softndk devices -v")
    else:
        raise DocError(f"{block.where}: cannot tell what {name} is (no [adapter], fault or "
                       f"[profile] section)")
    return (f"cat > {name} <<'DOC_TEST_INI_EOF'\n{block.text}DOC_TEST_INI_EOF\n"
            f"echo '# doc-test: loading {name}: {load.splitlines()[-1]}'\n{load} >/dev/null\n")


def script_of(block):
    if block.tag == "ini":
        return ini_script(block)
    if block.tag == "console":
        return console_commands(block.text)
    return block.text


def make_scratch(source_dir, build_dir):
    scratch = tempfile.mkdtemp(prefix="softndk-doc-test-")
    tree = os.path.join(scratch, "tree")
    shutil.copytree(source_dir, tree, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", "build", ".cache"))
    os.makedirs(os.path.join(tree, "build"))
    os.symlink(os.path.abspath(build_dir), os.path.join(tree, "build", "default"))
    runtime = os.path.join(scratch, "run")
    os.makedirs(runtime, mode=0o700)
    return scratch, tree, runtime


def block_environment(build_dir, runtime):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SOFTNDK_") and k not in ("NOTIFY_SOCKET", "CDPATH")}
    env["PATH"] = os.path.join(os.path.abspath(build_dir), "tools", "softndk") + os.pathsep + \
        env.get("PATH", "/usr/bin:/bin")
    env["XDG_RUNTIME_DIR"] = runtime
    env["SOFTNDK_SOCKET"] = os.path.join(runtime, "softndk.sock")
    env["PAGER"] = "cat"
    return env


def stop_leftovers(process, env, build_dir):
    """Kills the block's process group, then a daemon still answering on the socket."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    softndk = os.path.join(os.path.abspath(build_dir), "tools", "softndk", "softndk")
    status = subprocess.run([softndk, "rnic", "--status"], env=env, capture_output=True,
                            text=True, timeout=10)
    m = re.match(r"pid=(\d+) ", status.stdout)
    if status.returncode != 0 or not m:
        return None
    pid = int(m.group(1))
    os.kill(pid, signal.SIGTERM)
    for _ in range(250):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.02)
    else:
        os.kill(pid, signal.SIGKILL)
    return pid


def run_block(block, script, tree, state_file, env, build_dir):
    """Runs one block; returns (ok, seconds, report)."""
    # The variables the earlier blocks set come first; the ones this block leaves are
    # saved for the next (not the shell's own, which exist before the state is read).
    wrapper = (
        "__doc_test_base=\" $(compgen -v | tr '\\n' ' ') \"\n"
        f"[ -f '{state_file}' ] && . '{state_file}'\n"
        "set -e -o pipefail\n"
        f"{script}"
        "\nset +e\n"
        "for __v in $(compgen -v); do\n"
        "  case $__doc_test_base in *\" $__v \"*) ;; *) declare -p \"$__v\" 2>/dev/null ;; esac\n"
        f"done | grep -v '^declare -[^ ]*r' > '{state_file}.next'\n"
        f"mv '{state_file}.next' '{state_file}'\n"
        "exit 0\n")
    out_path = state_file + ".out"
    start = time.monotonic()
    with open(out_path, "w") as out:
        process = subprocess.Popen(["bash", "-c", wrapper], cwd=tree, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
        try:
            rc = process.wait(timeout=BLOCK_TIMEOUT_S)
            timed_out = False
        except subprocess.TimeoutExpired:
            rc, timed_out = None, True
    seconds = time.monotonic() - start
    daemon = stop_leftovers(process, env, build_dir)
    output = open(out_path, errors="replace").read()
    if timed_out:
        verdict = f"timed out after {BLOCK_TIMEOUT_S} s"
    elif rc != 0:
        verdict = f"exit status {rc}"
    else:
        verdict = None
    report = ""
    if verdict:
        report = (f"FAIL {block.where}: {verdict}\n--- script\n{script}--- output\n{output}"
                  f"--- end\n")
    if daemon is not None:
        report += f"note {block.where}: stopped the daemon it left running (pid {daemon})\n"
    return verdict is None, seconds, report


LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
OUTSIDE = re.compile(r"(?<![\w.])((?:\.\./)+[\w./-]*|/(?:work|home)/[\w./-]*)")


def check_links(source_dir, docs):
    """Problems with the documents' links and paths (see the module comment)."""
    problems = []
    root = os.path.realpath(source_dir)
    for doc in docs:
        path = os.path.join(source_dir, doc)
        base = os.path.dirname(os.path.realpath(path))
        for number, line in enumerate(open(path, encoding="utf-8"), 1):
            targets = LINK.findall(line)
            for target in targets:
                if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                    continue
                resolved = os.path.realpath(os.path.join(base, target.split("#")[0]))
                if not (resolved == root or resolved.startswith(root + os.sep)):
                    problems.append(f"{doc}:{number}: link outside the repository: {target}")
                elif not os.path.exists(resolved):
                    problems.append(f"{doc}:{number}: link to a missing file: {target}")
            for reference in OUTSIDE.findall(line):
                if reference in targets:
                    continue  # reported as a link
                if reference.startswith("/"):
                    problems.append(f"{doc}:{number}: absolute path outside the repository: "
                                    f"{reference}")
                    continue
                resolved = os.path.realpath(os.path.join(base, reference))
                if not (resolved == root or resolved.startswith(root + os.sep)):
                    problems.append(f"{doc}:{number}: path outside the repository: {reference}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--build-dir")
    parser.add_argument("--check-links", action="store_true",
                        help="check the documents' links and paths, run nothing")
    parser.add_argument("--list", action="store_true", help="list the blocks, run nothing")
    parser.add_argument("--only", help="run only blocks whose DOC:LINE contains this")
    parser.add_argument("docs", nargs="*")
    args = parser.parse_args()
    source_dir = os.path.abspath(args.source_dir)
    docs = args.docs or (["README.md"] + sorted(
        os.path.relpath(p, source_dir) for p in glob.glob(os.path.join(source_dir, "docs", "*.md")))
        + sorted(os.path.relpath(p, source_dir)
                 for p in glob.glob(os.path.join(source_dir, "examples", "*", "README.md"))))
    if args.check_links:
        if not args.docs:
            docs = sorted(set(docs) | {os.path.relpath(p, source_dir) for p in
                                       glob.glob(os.path.join(source_dir, "*", "README.md"))})
        problems = check_links(source_dir, docs)
        for problem in problems:
            print(problem)
        print(f"{len(docs)} documents, {len(problems)} problems")
        return 1 if problems else 0
    if not args.build_dir:
        parser.error("--build-dir is required to run the blocks")
    try:
        per_doc = [(doc, extract_blocks(doc, os.path.join(source_dir, doc))) for doc in docs]
        for _, blocks in per_doc:
            for b in blocks:
                b.skip_reason()
                if b.tag == "ini":
                    ini_script(b)
    except (DocError, OSError) as e:
        print(f"doc_blocks_test: {e}", file=sys.stderr)
        return 2

    if args.list:
        for _, blocks in per_doc:
            for b in blocks:
                reason = b.skip_reason()
                print(f"{b.where}" + (f"  SKIP: {reason}" if reason else ""))
        return 0

    passed, failed, skipped = 0, [], []
    total_start = time.monotonic()
    for doc, blocks in per_doc:
        if args.only:
            blocks = [b for b in blocks if args.only in f"{b.doc}:{b.line}"]
        if not blocks:
            continue
        scratch, tree, runtime = make_scratch(source_dir, args.build_dir)
        env = block_environment(args.build_dir, runtime)
        state_file = os.path.join(scratch, "state.sh")
        try:
            for b in blocks:
                reason = b.skip_reason()
                if reason:
                    skipped.append((b, reason))
                    continue
                ok, seconds, report = run_block(b, script_of(b), tree, state_file, env,
                                                args.build_dir)
                print(f"{'ok  ' if ok else 'FAIL'} {b.where} {seconds:.1f} s", flush=True)
                if report:
                    print(report, end="", flush=True)
                if ok:
                    passed += 1
                else:
                    failed.append(b)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"\n{passed} blocks passed, {len(failed)} failed, {len(skipped)} skipped "
          f"({time.monotonic() - total_start:.1f} s)")
    for b, reason in skipped:
        print(f"  skipped {b.where}: {reason}")
    for b in failed:
        print(f"  FAILED  {b.where}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
