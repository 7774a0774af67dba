"""Checks a file against the Trace Event format (the JSON object form that
Perfetto's UI and chrome://tracing open), as detdiff --chrome-trace writes
it, and prints facts about it for test-chrome-trace.sh to check.

    chrome_check.py FILE       exit 0 and one "key value" line per fact,
                               or exit 1 naming the first event at fault

Written from the format's specification (the "Trace Event Format" document
of the Catapult project): an object whose "traceEvents" is a list of
events; every event has a "ph" (phase); complete events ("X") have name,
ts, dur, pid and tid, instant events ("i") a scope "s" of g, p or t,
metadata events ("M") one of the documented names with its args; ts and
dur are numbers in microseconds; "cname" is one of the reserved colours.
Perfetto's own checker (its trace processor) is downloaded at run time,
which cannot happen here, so this is the check.
"""
import json
import sys

METADATA = {"process_name": "name", "thread_name": "name",
            "process_sort_index": "sort_index", "thread_sort_index": "sort_index",
            "process_labels": "labels"}
# Catapult's reserved colour names (tracing/base/color_scheme.html).
CNAMES = {"thread_state_uninterruptible", "thread_state_iowait", "thread_state_running",
          "thread_state_runnable", "thread_state_sleeping", "thread_state_unknown",
          "background_memory_dump", "light_memory_dump", "detailed_memory_dump",
          "vsync_highlight_color", "generic_work", "good", "bad", "terrible", "black",
          "grey", "white", "yellow", "olive", "rail_response", "rail_animation",
          "rail_idle", "rail_load", "startup", "heap_dump_stack_frame",
          "heap_dump_object_type", "heap_dump_child_node_arrow", "cq_build_running",
          "cq_build_passed", "cq_build_failed", "cq_build_abandoned",
          "cq_build_attempt_runnig", "cq_build_attempt_passed", "cq_build_attempt_failed"}


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise ValueError("not an object with a traceEvents list")
    if doc.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        raise ValueError("displayTimeUnit must be ms or ns")
    names, marks, spans, gaps = {}, [], {}, 0
    for n, e in enumerate(doc["traceEvents"]):
        where = "event %d (%s)" % (n, json.dumps(e)[:200])
        if not isinstance(e, dict) or not isinstance(e.get("ph"), str):
            raise ValueError(where + ": no phase")
        if not isinstance(e.get("pid"), int):
            raise ValueError(where + ": pid must be an integer")
        if "tid" in e and not isinstance(e["tid"], int):
            raise ValueError(where + ": tid must be an integer")
        if "args" in e and not isinstance(e["args"], dict):
            raise ValueError(where + ": args must be an object")
        if "cname" in e and e["cname"] not in CNAMES:
            raise ValueError(where + ": cname is not a reserved colour")
        ph = e["ph"]
        if ph == "M":
            key = METADATA.get(e.get("name"))
            if not key or key not in e.get("args", {}):
                raise ValueError(where + ": unknown metadata or its arg missing")
            if e["name"] == "process_name":
                names[e["pid"]] = e["args"]["name"]
            continue
        if not isinstance(e.get("name"), str) or not number(e.get("ts")) or e["ts"] < 0:
            raise ValueError(where + ": name and a non-negative ts needed")
        if ph == "X":
            if not isinstance(e.get("tid"), int) or not number(e.get("dur")) or e["dur"] < 0:
                raise ValueError(where + ": a complete event needs tid and dur")
            # Events of one thread must nest or follow each other; these
            # never nest, so they must not overlap.
            key = (e["pid"], e["tid"])
            if e["ts"] < spans.get(key, 0):
                raise ValueError(where + ": overlaps the event before it on its thread")
            spans[key] = e["ts"] + e["dur"]
            gaps += e.get("cat") == "detdiff"
        elif ph == "i":
            if e.get("s", "t") not in ("g", "p", "t"):
                raise ValueError(where + ": instant scope must be g, p or t")
            marks.append(e)
        else:
            raise ValueError(where + ": phase %r is not one detdiff writes" % ph)
    print("events", len(doc["traceEvents"]))
    print("processes", " ".join(sorted(names.values())))
    print("gaps", gaps)
    for m in marks:
        print("mark", names.get(m["pid"], "?"), m.get("tid", "-"), m["ts"], m["name"])


try:
    check(sys.argv[1])
except (OSError, ValueError) as err:
    print("chrome_check: %s: %s" % (sys.argv[1], err), file=sys.stderr)
    sys.exit(1)
