#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Independent protobuf wire decoder (no libprotobuf) used by tests to count
# XEvents in an XSpace and NodeExecStats in a binary RunMetadata/StepStats.
"""Usage:
  pbdecode.py xspace FILE      -> "planes=N lines=N events=N" (events = XEvents)
  pbdecode.py runmeta FILE     -> "devices=N nodes=N" (RunMetadata)
  pbdecode.py stepstats FILE   -> "devices=N nodes=N" (StepStats)
  pbdecode.py dump FILE [DEPTH] -> generic field dump (debugging)
  pbdecode.py xlines FILE      -> one line per XLine: plane, line name, events
Exit status 1 (message on stderr) when the input is not valid wire format.
"""
import sys


class WireError(Exception):
    pass


def varint(buf, pos, end):
    shift = 0
    val = 0
    while True:
        if pos >= end:
            raise WireError("truncated varint at %d" % pos)
        b = buf[pos]
        pos += 1
        val |= (b & 0x7F) << shift
        if b < 0x80:
            return val, pos
        shift += 7
        if shift >= 70:
            raise WireError("varint too long at %d" % pos)


def fields(buf, start, end):
    """Yield (field_number, wire_type, value, value_start) over buf[start:end].
    value: int for varint/fixed, (s, e) slice bounds for length-delimited."""
    pos = start
    while pos < end:
        key, pos = varint(buf, pos, end)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise WireError("field number 0 at %d" % pos)
        vstart = pos
        if wt == 0:
            v, pos = varint(buf, pos, end)
        elif wt == 1:
            if pos + 8 > end:
                raise WireError("truncated fixed64 at %d" % pos)
            v = int.from_bytes(buf[pos:pos + 8], "little")
            pos += 8
        elif wt == 5:
            if pos + 4 > end:
                raise WireError("truncated fixed32 at %d" % pos)
            v = int.from_bytes(buf[pos:pos + 4], "little")
            pos += 4
        elif wt == 2:
            n, pos = varint(buf, pos, end)
            if n > end - pos:
                raise WireError("length %d past end at %d" % (n, pos))
            v = (pos, pos + n)
            pos += n
        else:
            raise WireError("unsupported wire type %d at %d" % (wt, pos))
        yield num, wt, v, vstart


def sub(buf, span):
    return fields(buf, span[0], span[1])


def text(buf, span):
    return bytes(buf[span[0]:span[1]]).decode("utf-8", "replace")


def xspace_count(buf):
    planes = lines = events = 0
    for num, wt, v, _ in fields(buf, 0, len(buf)):
        if num == 1 and wt == 2:
            planes += 1
            for pn, pwt, pv, _ in sub(buf, v):
                if pn == 3 and pwt == 2:
                    lines += 1
                    for ln, lwt, lv, _ in sub(buf, pv):
                        if ln == 4 and lwt == 2:
                            events += 1
                            for _ in sub(buf, lv):  # validate the event
                                pass
    return planes, lines, events


def xlines(buf):
    out = []
    for num, wt, v, _ in fields(buf, 0, len(buf)):
        if num != 1 or wt != 2:
            continue
        pname = ""
        plines = []
        for pn, pwt, pv, _ in sub(buf, v):
            if pn == 2 and pwt == 2:
                pname = text(buf, pv)
            elif pn == 3 and pwt == 2:
                lname = dname = ""
                nev = 0
                for ln, lwt, lv, _ in sub(buf, pv):
                    if ln == 2 and lwt == 2:
                        lname = text(buf, lv)
                    elif ln == 11 and lwt == 2:
                        dname = text(buf, lv)
                    elif ln == 4 and lwt == 2:
                        nev += 1
                plines.append((lname, dname, nev))
        for lname, dname, nev in plines:
            out.append("%s\t%s\t%s\t%d" % (pname, lname, dname, nev))
    return out


def stepstats_count(buf, span):
    devices = nodes = 0
    for num, wt, v, _ in sub(buf, span):
        if num == 1 and wt == 2:
            devices += 1
            for dn, dwt, dv, _ in sub(buf, v):
                if dn == 2 and dwt == 2:
                    nodes += 1
                    for _ in sub(buf, dv):
                        pass
    return devices, nodes


def runmeta_count(buf):
    devices = nodes = 0
    for num, wt, v, _ in fields(buf, 0, len(buf)):
        if num == 1 and wt == 2:
            d, n = stepstats_count(buf, v)
            devices += d
            nodes += n
    return devices, nodes


def dump(buf, span, depth, maxdepth, out):
    for num, wt, v, at in sub(buf, span):
        pad = "  " * depth
        if wt == 2:
            s, e = v
            raw = bytes(buf[s:e])
            nested = None
            if depth < maxdepth and e > s:
                try:
                    nested = list(sub(buf, v))
                except WireError:
                    nested = None
            if nested:
                out.append("%s%d {  # @%d len %d" % (pad, num, at, e - s))
                dump(buf, v, depth + 1, maxdepth, out)
                out.append(pad + "}")
            else:
                out.append("%s%d: %r" % (pad, num, raw[:80]))
        else:
            out.append("%s%d: %d" % (pad, num, v))


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    mode, path = argv[1], argv[2]
    with open(path, "rb") as f:
        buf = memoryview(f.read())
    try:
        if mode == "xspace":
            print("planes=%d lines=%d events=%d" % xspace_count(buf))
        elif mode == "runmeta":
            print("devices=%d nodes=%d" % runmeta_count(buf))
        elif mode == "stepstats":
            print("devices=%d nodes=%d" % stepstats_count(buf, (0, len(buf))))
        elif mode == "xlines":
            print("\n".join(xlines(buf)))
        elif mode == "dump":
            out = []
            dump(buf, (0, len(buf)), 0, int(argv[3]) if len(argv) > 3 else 3, out)
            print("\n".join(out))
        else:
            sys.stderr.write(__doc__)
            return 2
    except WireError as e:
        sys.stderr.write("pbdecode: %s: %s\n" % (path, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
