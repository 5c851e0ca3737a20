#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Make a man page from a page of docs/ with go-md2man (docs/packaging.md).

  mkman.py [--md2man PROG] [--version V] [--docdir DIR] [--date YYYY-MM-DD] IN.md OUT.1

docs/cli.md becomes tftracer(1), docs/cmd-NAME.md tftracer-NAME(1). The page's
Markdown is rearranged into a man page's sections before go-md2man turns it into
roff: the title line, NAME (the one-line summary of the command's row in
docs/cli.md's table, else the page's first sentence), SYNOPSIS (the code block
under the page's title), DESCRIPTION (the rest; its ## headings become
sections, ### subsections) and SEE ALSO (every other tftracer page: every
docs/cmd-*.md next to IN.md). Links to cmd-NAME.md become tftracer-NAME(1);
links to other documents name the file in DOCDIR, where `make install` puts
docs/*.md. The date is SOURCE_DATE_EPOCH's (reproducible builds), else the
page's last commit's, else its modification time.
Exit status: 0 ok, 1 go-md2man failed, 2 bad usage or input.
"""
import argparse
import datetime
import glob
import os
import re
import subprocess
import sys

MACROS = ["nh", "TH", "SH", "SS", "PP", "LP", "RS", "RE", "nf", "fi", "IP", "TP", "HP", "TS", "TE",
          "br", "sp", "in", "ti", "ad", "na", "B", "I", "BR", "IR", "RB", "RI"]
TOOL_SUMMARY = "op-level runtime tracer and profiler for deep-learning programs"


def die(msg, code=2):
    sys.stderr.write("mkman: %s\n" % msg)
    sys.exit(code)


def page_name(path):
    base = os.path.basename(path)
    if base == "cli.md":
        return "tftracer"
    m = re.fullmatch(r"cmd-([A-Za-z0-9_-]+)\.md", base)
    if not m:
        die("%s: byte 0: expected docs/cli.md or docs/cmd-NAME.md" % path)
    return "tftracer-" + m.group(1)


def page_date(path):
    sde = os.environ.get("SOURCE_DATE_EPOCH")
    if sde and sde.isdigit():
        t = int(sde)
    else:
        t = None
        try:
            out = subprocess.run(["git", "log", "-1", "--format=%ct", "--", os.path.basename(path)],
                                 cwd=os.path.dirname(os.path.abspath(path)), capture_output=True,
                                 text=True, timeout=30)
            if out.returncode == 0 and out.stdout.strip().isdigit():
                t = int(out.stdout.strip())
        except (OSError, subprocess.SubprocessError):
            pass
        if t is None:
            t = int(os.stat(path).st_mtime)
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%d")


def cli_summaries(cli_md):
    """{NAME: summary} from the rows of docs/cli.md's table that link cmd-NAME.md."""
    out = {}
    try:
        text = open(cli_md, encoding="utf-8").read()
    except OSError:
        return out
    for line in text.splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if len(cells) < 3:
            continue
        m = re.search(r"\(cmd-([A-Za-z0-9_-]+)\.md\)", cells[-1])
        if m:
            out[m.group(1)] = cells[1]
    return out


def first_sentence(lines):
    para = []
    for line in lines:
        if not line.strip():
            if para:
                break
            continue
        if line.startswith(("```", "|", "#", "-", "*")):
            if para:
                break
            continue
        para.append(line.strip())
    text = " ".join(para)
    m = re.match(r"(.+?[.:;])(\s|$)", text)
    return (m.group(1) if m else text).rstrip(".:;")


def plain(md):
    """Markdown inline text as plain text for NAME (no backticks, emphasis or links)."""
    md = re.sub(r"\[([^]]*)\]\([^)]*\)", r"\1", md)
    md = md.replace("\\|", "|")
    return re.sub(r"[`*]", "", md).strip()


def heading(text):
    """A section title: upper case, except what is in backticks (options stay as typed)."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(p[1:-1] if p.startswith("`") else p.upper() for p in parts).strip()


def rewrite_links(line, docdir, pages):
    def repl(m):
        text, target = m.group(1), m.group(2)
        if re.match(r"[a-z]+:", target):  # http(s): go-md2man prints text <url>
            return m.group(0)
        file = target.split("#", 1)[0]
        c = re.fullmatch(r"cmd-([A-Za-z0-9_-]+)\.md", file)
        if c:
            return "**tftracer-%s**(1)" % c.group(1)
        if file == "cli.md":
            return "**tftracer**(1)"
        if not file.endswith(".md"):
            return text
        path = "%s/%s" % (docdir.rstrip("/"), os.path.basename(file))
        return "`%s`" % path if plain(text) == os.path.basename(file) else "%s (`%s`)" % (text, path)
    return re.sub(r"\[([^]]*)\]\(([^)\s]+)\)", repl, line)


def to_man_markdown(src, name, version, date, docdir, others, summary):
    lines = open(src, encoding="utf-8").read().splitlines()
    i = 0
    while i < len(lines) and not lines[i].startswith("# "):
        i += 1
    if i == len(lines):
        die("%s: byte 0: expected a '# ' title line" % src)
    i += 1
    body = lines[i:]
    # SYNOPSIS: the fenced code block right under the title
    synopsis = []
    j = 0
    while j < len(body) and not body[j].strip():
        j += 1
    if j < len(body) and body[j].startswith("```"):
        k = j + 1
        while k < len(body) and not body[k].startswith("```"):
            k += 1
        synopsis = body[j:k + 1]
        body = body[k + 1:]
    if name == "tftracer":
        synopsis = ["```", "tftracer COMMAND [OPTIONS] [ARGS...]", "tftracer FILE...",
                    "tftracer --version", "tftracer --help", "```"]
        summary = TOOL_SUMMARY
    if not summary:
        summary = first_sentence(body) or name
        sys.stderr.write("mkman: %s: no row links it in docs/cli.md's table; NAME says: %s\n"
                         % (src, summary))
    out = ['%% %s 1 "%s" "tftracer %s" "tftracer manual"' % (name.upper(), date, version), "",
           "# NAME", "%s - %s" % (name, plain(summary)), ""]
    if synopsis:
        out += ["# SYNOPSIS", ""] + synopsis + [""]
    out += ["# DESCRIPTION", ""]
    fence = False
    for line in body:
        if line.startswith("```"):
            fence = not fence
            out.append(line)
            continue
        if fence:
            out.append(line)
            continue
        if line.startswith("## "):
            out.append("# " + heading(line[3:]))
        elif line.startswith("### "):
            out.append("## " + heading(line[4:]))
        elif line.startswith("#### "):
            out.append("### " + line[5:].strip())
        else:
            out.append(rewrite_links(line, docdir, others))
    see = ["**%s**(1)" % p for p in others if p != name]
    out += ["", "# SEE ALSO", "", ", ".join(see) + ".", "",
            "The documents named here are installed in `%s`." % docdir.rstrip("/"), ""]
    return "\n".join(out)


def table_rows(lines):
    """The rows of a tbl table's data lines: lists of (text, was a T{ block})."""
    rows, i = [], 0
    while i < len(lines):
        row, rest = [], lines[i]
        i += 1
        while True:
            cells = rest.split("\t")
            for c in cells[:-1]:
                row.append((c, False))
            if cells[-1] != "T{":
                row.append((cells[-1], False))
                break
            block = []
            while i < len(lines) and not lines[i].startswith("T}"):
                block.append(lines[i])
                i += 1
            row.append(("\n".join(block), True))
            rest = lines[i][2:] if i < len(lines) else ""
            i += 1
            # go-md2man 2.0 may end a block's line there and go on with "\tNEXT"
            if not rest and i < len(lines) and lines[i].startswith("\t"):
                rest = lines[i]
                i += 1
            if not rest.startswith("\t"):
                break
            rest = rest[1:]
        rows.append(row)
    return rows


def wrap_table_cells(roff):
    """tbl wraps only text blocks (T{ ... T}); go-md2man makes one of a cell by its
    length in Markdown, so a cell whose escapes make it short there would run past
    the page's edge, and it breaks a row after a block that is not the row's last
    cell. Every cell of more than 30 characters becomes a text block, rows are
    whole again, and the last column takes the width the others leave."""
    out, table, spec = [], None, False
    for line in roff.split("\n"):
        if table is None:
            out.append(line)
            if line.startswith(".TS"):
                table, spec = [], True
            continue
        if line.startswith(".TE"):
            for row in table_rows(table):
                out.append("\t".join("T{\n%s\nT}" % t if blk or len(t) > 30 else t for t, blk in row))
            out.append(line)
            table = None
        elif spec:
            end = line.rstrip().endswith(".")
            cols = line.rstrip().rstrip(".").split()
            if cols and all(re.fullmatch(r"[lrcn]", c) for c in cols):
                line = " ".join(cols[:-1] + [cols[-1] + "x"]) + (" ." if end else "")
            out.append(line)
            spec = not end
        else:
            table.append(line)
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--md2man", default="go-md2man")
    ap.add_argument("--version", default="")
    ap.add_argument("--docdir", default="/usr/local/share/doc/tftracer")
    ap.add_argument("--date")
    ap.add_argument("src")
    ap.add_argument("out")
    a = ap.parse_args()
    if not os.path.isfile(a.src):
        die("%s: cannot read" % a.src)
    docs = os.path.dirname(os.path.abspath(a.src))
    name = page_name(a.src)
    cmds = sorted(os.path.basename(p)[4:-3] for p in glob.glob(os.path.join(docs, "cmd-*.md")))
    others = ["tftracer"] + ["tftracer-" + c for c in cmds]
    summary = None
    if name != "tftracer":
        summary = cli_summaries(os.path.join(docs, "cli.md")).get(name[len("tftracer-"):])
    md = to_man_markdown(a.src, name, a.version, a.date or page_date(a.src), a.docdir, others, summary)
    try:
        r = subprocess.run([a.md2man], input=md, capture_output=True, text=True, timeout=120)
    except OSError as e:
        die("cannot run %s (Debian: apt-get install go-md2man): %s" % (a.md2man, e), 1)
    if r.returncode != 0:
        die("%s failed on %s: %s" % (a.md2man, a.src, r.stderr.strip()[:300]), 1)
    roff = r.stdout
    # a pipe escaped for a Markdown table cell (`a\|b`) keeps its backslash in go-md2man 2.0
    roff = roff.replace("\\\\|", "|")
    roff = wrap_table_cells(roff)
    # ragged right, as most man pages: code words in narrow table cells cannot be spread;
    # no hyphenation (paths, options, names): go-md2man's .nh comes before .TH, which undoes it
    roff = re.sub(r"(?m)^(\.TH .*)$", r"\1\n.ad l\n.nh", roff, count=1)
    # go-md2man 2.0 leaves a line of text or code that starts with '.' or "'" (an
    # ellipsis) as it is: roff would read a request; \& before it keeps it text
    roff = re.sub(r"(?m)^(?=[.'](?!(?:%s)(?:\s|$)))" % "|".join(MACROS), r"\\&", roff)
    tmp = a.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(roff)
    os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
