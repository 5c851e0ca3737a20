#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Independent counter for Chrome trace JSON (Chrome/catapult, Kineto, tf.timeline):
# what `tftracer import` must produce, computed with python3's json module only.
"""Count the events a Chrome-trace-format file should import as.

Usage: count_chrome.py FILE [--lenient]   prints one JSON object of counts.

Semantics (the import contract; everything else in the file is ignored):
  X                         one slice
  B/E                       per (pid, tid) stack in file order: E closes the
                            innermost open B; E without B is dropped
                            ("unmatched_ends"); B never closed is still a
                            slice, counted in unclosed_slices
  b/e, S/F (legacy async)   one slice per pair matched by (pid, cat, id, name)
                            (LIFO per key, file order); unmatched b/S is a
                            slice counted in unclosed_slices; e/F without a
                            begin is dropped; T/p (legacy async steps) are
                            instants on the async track
  N/D                       object lifetime: one slice per N (matched by
                            (pid, name, id) with D; N without D is still a
                            slice, not counted as unclosed); D without N dropped
  i/I/R/n/O                 one instant each
  C                         one counter sample per numeric arg value
  s/t/f                     flows keyed by (cat, id or id2): the points of a
                            key, in timestamp order (ties: s before t before
                            f, then file order), form segments: s opens, t
                            ends the oldest open segment (one flow) and opens
                            the next, f ends the oldest open segment (a
                            reused id pairs first-in, first-out; an s ends
                            any chain left open by a t);
                            f with nothing open and an s that is never ended
                            are one unmatched flow each (unmatched_flows); a
                            trailing t or a t with nothing open makes no flow.
                            Flow v2 (X/B events with bind_id): flow_out alone
                            = s, flow_in alone = f, both = t, keyed by bind_id
  M                         metadata, not an event; P and all other phases
                            are skipped
  steps                     slices named ProfilerStep#<digits>, except the
                            GPU-side copies of the annotation (a category
                            containing "gpu", Kineto's gpu_user_annotation)
--lenient accepts an unterminated top-level events array (the Chrome format's
allowance: a trace cut between two events), as the importer must.
"""
import gzip
import json
import re
import sys

STEP_RE = re.compile(r"^ProfilerStep#\d+$")
INSTANT_PHASES = frozenset("iIRnOTp")
FLOW_RANK = {"s": 0, "t": 1, "f": 2}  # at equal ts a flow starts before it ends


class NotATrace(Exception):
    """The file is valid JSON but holds no Chrome trace events."""


def read_bytes(path):
    with open(path, "rb") as fp:
        raw = fp.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw


def _skip_ws(text, pos):
    n = len(text)
    while pos < n and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _lenient_array(text, pos):
    """Decode the array starting at text[pos] == '[' element by element.

    Returns (events, end_pos, terminated). An array cut between two elements
    (optionally after a trailing comma) is accepted; a cut inside an element
    raises ValueError."""
    dec = json.JSONDecoder()
    assert text[pos] == "["
    pos += 1
    events = []
    pos = _skip_ws(text, pos)
    if pos < len(text) and text[pos] == "]":
        return events, pos + 1, True
    while True:
        pos = _skip_ws(text, pos)
        if pos >= len(text):
            return events, pos, False
        obj, pos = dec.raw_decode(text, pos)
        events.append(obj)
        pos = _skip_ws(text, pos)
        if pos >= len(text):
            return events, pos, False
        if text[pos] == "]":
            return events, pos + 1, True
        if text[pos] != ",":
            raise ValueError("expected ',' or ']' at char %d" % pos)
        pos += 1


def parse_trace(raw, lenient=False):
    """Return the list of trace events of a Chrome trace document (bytes)."""
    try:
        doc = json.loads(raw)
    except ValueError:
        if not lenient:
            raise
        text = raw.decode("utf-8")
        pos = _skip_ws(text, 0)
        if pos < len(text) and text[pos] == "[":
            events, end, terminated = _lenient_array(text, pos)
            if terminated and _skip_ws(text, end) != len(text):
                raise
            doc = events
        else:
            raise
    if isinstance(doc, dict):
        events = doc.get("traceEvents")
        if not isinstance(events, list):
            raise NotATrace("object without a traceEvents array")
    elif isinstance(doc, list):
        events = doc
    else:
        raise NotATrace("neither an object nor an array")
    if events and not any(isinstance(e, dict) and "ph" in e for e in events):
        raise NotATrace("array of objects without 'ph'")
    return events


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _ts(ev):
    v = ev.get("ts", 0)
    if _num(v):
        return v
    try:
        return float(v)
    except (TypeError, ValueError):
        return 0


def _flow_id(ev):
    if "id" in ev:
        return json.dumps(ev["id"], sort_keys=True)
    if "id2" in ev:
        return "id2:" + json.dumps(ev["id2"], sort_keys=True)
    return None


def _hashable(v):
    return v if isinstance(v, (str, int, float, type(None))) else json.dumps(v, sort_keys=True)


def count_events(events):
    """Count what the importer must produce for a list of event dicts."""
    c = {
        "slices": 0, "instants": 0, "counters": 0, "flows": 0, "steps": 0,
        "unclosed_slices": 0, "unmatched_flows": 0, "unmatched_ends": 0,
        "skipped_events": 0, "metadata_events": 0,
    }
    stacks = {}     # (pid, tid) -> [(name, cat)]: open B
    async_open = {}  # (pid, cat, id, name) -> count of open b/S
    objects = {}    # (pid, name, id) -> [cat of each open N]
    flow_pts = {}   # (cat, id) -> [(ts, seq, ph)]
    pids = set()
    step_names = []

    def add_slice(name, cat):
        c["slices"] += 1
        if isinstance(name, str) and STEP_RE.match(name) and \
                not (isinstance(cat, str) and "gpu" in cat):
            c["steps"] += 1
            step_names.append(name)

    for seq, ev in enumerate(events):
        if not isinstance(ev, dict):
            c["skipped_events"] += 1
            continue
        ph = ev.get("ph")
        name = ev.get("name", "")
        cat = ev.get("cat", "")
        pid = _hashable(ev.get("pid"))
        tid = _hashable(ev.get("tid"))
        if ph == "M":
            c["metadata_events"] += 1
            continue
        if ph in ("X", "B", "E", "b", "e", "S", "F", "N", "D", "C", "s", "t", "f") or \
                (isinstance(ph, str) and ph in INSTANT_PHASES):
            pids.add(pid)
        if ph in ("X", "B") and "bind_id" in ev:
            fin, fout = ev.get("flow_in") is True, ev.get("flow_out") is True
            if fin or fout:
                vph = "t" if fin and fout else ("f" if fin else "s")
                key = ("bind_id", _hashable(ev["bind_id"]))
                flow_pts.setdefault(key, []).append((_ts(ev), FLOW_RANK[vph], seq, vph))
        if ph == "X":
            add_slice(name, cat)
        elif ph == "B":
            stacks.setdefault((pid, tid), []).append((name, cat))
        elif ph == "E":
            st = stacks.get((pid, tid))
            if st:
                add_slice(*st.pop())
            else:
                c["unmatched_ends"] += 1
        elif ph in ("b", "S"):
            key = (pid, _hashable(cat), _flow_id(ev), name)
            async_open[key] = async_open.get(key, 0) + 1
        elif ph in ("e", "F"):
            key = (pid, _hashable(cat), _flow_id(ev), name)
            if async_open.get(key, 0) > 0:
                async_open[key] -= 1
                add_slice(name, cat)
            else:
                c["unmatched_ends"] += 1
        elif ph == "N":
            objects.setdefault((pid, name, _flow_id(ev)), []).append(cat)
        elif ph == "D":
            key = (pid, name, _flow_id(ev))
            if objects.get(key):
                add_slice(name, objects[key].pop())
            else:
                c["unmatched_ends"] += 1
        elif isinstance(ph, str) and ph in INSTANT_PHASES:
            c["instants"] += 1
        elif ph == "C":
            args = ev.get("args")
            if isinstance(args, dict):
                c["counters"] += sum(1 for v in args.values() if _num(v))
        elif ph in ("s", "t", "f"):
            key = (_hashable(ev.get("cat", "")), _flow_id(ev))
            flow_pts.setdefault(key, []).append((_ts(ev), FLOW_RANK[ph], seq, ph))
        else:
            c["skipped_events"] += 1

    for st in stacks.values():
        for name, cat in st:
            add_slice(name, cat)
            c["unclosed_slices"] += 1
    for key, n in async_open.items():
        for _ in range(n):
            add_slice(key[3], key[1])
            c["unclosed_slices"] += 1
    for key, cats in objects.items():
        for ocat in cats:
            add_slice(key[1], ocat)

    for pts in flow_pts.values():
        pts.sort()
        # open points of this key, oldest first: a reused id pairs first-in,
        # first-out (s s f f -> two flows)
        opened = []
        for _, _, _, ph in pts:
            if ph == "s":
                # a new start ends any chain whose last point was a t
                opened = [o for o in opened if o == "s"]
                opened.append("s")
            elif ph == "t":
                if opened:
                    opened.pop(0)
                    c["flows"] += 1
                opened.append("t")
            else:  # f
                c["flows"] += 1
                if opened:
                    opened.pop(0)
                else:
                    c["unmatched_flows"] += 1
        for ph in opened:
            if ph == "s":
                c["flows"] += 1
                c["unmatched_flows"] += 1

    c["pids"] = len(pids)
    c["step_names"] = sorted(step_names, key=lambda s: int(s.split("#")[1]))
    return c


def count_file(path, lenient=False):
    return count_events(parse_trace(read_bytes(path), lenient=lenient))


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    lenient = "--lenient" in argv
    if len(args) != 1:
        sys.stderr.write("usage: count_chrome.py FILE [--lenient]\n")
        return 2
    try:
        counts = count_file(args[0], lenient=lenient)
    except NotATrace as e:
        sys.stderr.write("count_chrome: %s: not a Chrome trace: %s\n" % (args[0], e))
        return 3
    except (OSError, ValueError) as e:
        sys.stderr.write("count_chrome: %s: %s\n" % (args[0], e))
        return 2
    counts.pop("step_names")
    print(json.dumps(counts, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
