#!/usr/bin/env python3
"""Turns JMH JSON results (-rf json) into the markdown tables of docs/benchmarks.md.

Usage: summarize.py RESULT.json [RESULT.json ...] > summary.md

A benchmark is named <Backend>Benchmark.<contender><Path>: the class gives the backend,
the method the contender (starter, bare, plain, springIntegration, camel) and the path
(First, Duplicate). ops/s comes from throughput mode; when a run has sample-time mode
only (quick mode), it is derived as threads / mean time per operation and marked with ~.
"""
import json
import re
import sys
from collections import defaultdict

BACKENDS = {
    "MemoryBenchmark": "memory",
    "RedisBenchmark": "redis",
    "JdbcBenchmark": "jdbc (PostgreSQL)",
    "JdbcInTransactionBenchmark": "jdbc in caller's tx",
    "HybridBenchmark": "hybrid",
}
CONTENDERS = {
    "starter": "starter",
    "bare": "bare (by hand)",
    "bareSelect": "one SELECT by hand",
    "plain": "plain call",
    "springIntegration": "Spring Integration",
    "camel": "Camel",
}
PEERS = ("springIntegration", "camel")
NOTES = {
    ("springIntegration", "redis"): "a",
    ("springIntegration", "jdbc (PostgreSQL)"): "b",
    ("camel", "redis"): "c",
    ("camel", "jdbc (PostgreSQL)"): "d",
    ("springIntegration", "jdbc in caller's tx"): "e",
    ("camel", "jdbc in caller's tx"): "f",
}
FOOTNOTES = {
    "a": "Spring Integration `RedisMetadataStore`: `HSETNX` in one hash; marks on receipt "
         "(no in-progress state: a crash after the mark loses the message), stores no result, "
         "keys never expire, no fencing.",
    "b": "Spring Integration `JdbcMetadataStore`: one insert-if-absent; same guarantees as (a) "
         "but durable; rows never expire.",
    "c": "Camel `SpringRedisIdempotentRepository`: `SISMEMBER` then `SADD` (check-then-insert, "
         "not atomic: two racing deliveries can both pass); no in-progress state, no result, "
         "one set that never expires.",
    "d": "Camel `JdbcMessageIdRepository`: `SELECT COUNT(*)` then `INSERT` in one transaction "
         "(check-then-insert: a racing duplicate fails on the primary key rather than being "
         "answered); no in-progress state, no result, rows never expire.",
    "e": "(b) inside the same kind of transaction: its insert-if-absent joins it, then the commit.",
    "f": "(d) inside the same kind of transaction: its two statements join it, then the commit.",
}
PATHS = ("First", "Duplicate", "Call")
TIME_UNITS = {"s": 1e6, "ms": 1e3, "us": 1.0, "ns": 1e-3}


def per_second(unit):
    # "ops/ms" -> ops per second factor
    return 1e6 / TIME_UNITS[unit.split("/")[1]]


def micros(unit):
    # "ms/op" -> microseconds factor
    return TIME_UNITS[unit.split("/")[0]]


def load(paths):
    results = defaultdict(dict)
    for path in paths:
        with open(path) as f:
            for entry in json.load(f):
                cls, method = entry["benchmark"].rsplit(".", 1)
                cls = cls.rsplit(".", 1)[1]
                match = re.fullmatch(r"(starter|bareSelect|bare|plain|springIntegration|camel)(First|Duplicate|Call)", method)
                if cls not in BACKENDS or not match:
                    continue
                key = (BACKENDS[cls], match.group(1), match.group(2), entry["threads"])
                metric = entry["primaryMetric"]
                row = results[key]
                if entry["mode"] == "thrpt":
                    row["ops"] = metric["score"] * per_second(metric["scoreUnit"])
                elif entry["mode"] == "sample":
                    factor = micros(metric["scoreUnit"])
                    row["mean"] = metric["score"] * factor
                    percentiles = metric.get("scorePercentiles", {})
                    for p in ("50.0", "99.0", "99.9"):
                        if p in percentiles:
                            row["p" + p] = percentiles[p] * factor
    for (backend, contender, path, threads), row in results.items():
        if "ops" not in row and row.get("mean"):
            row["ops"] = threads * 1e6 / row["mean"]
            row["derived"] = True
    return results


def ops(row):
    if not row or "ops" not in row:
        return "–"
    text = f"{row['ops']:,.0f}"
    return "~" + text if row.get("derived") else text


def us(row, key):
    if not row or key not in row:
        return "–"
    value = row[key]
    return f"{value:,.1f}" if value >= 10 else f"{value:,.2f}"


def ratio(a, b):
    if not a or not b or "ops" not in a or "ops" not in b:
        return "–"
    return f"{a['ops'] / b['ops']:.2f}"


def main(paths):
    results = load(paths)
    backends = [b for b in BACKENDS.values() if any(k[0] == b for k in results)]
    threads_seen = sorted({k[3] for k in results})
    out = []
    out.append("| backend | path | threads | starter ops/s | starter p99 µs | bare ops/s | starter / bare "
               "| best peer | peer ops/s | starter / best peer |")
    out.append("|---|---|---:|---:|---:|---:|---:|---|---:|---:|")
    used_notes = set()
    for backend in backends:
        for path in ("First", "Duplicate"):
            for threads in threads_seen:
                starter = results.get((backend, "starter", path, threads))
                bare = results.get((backend, "bare", path, threads))
                peers = [(c, results.get((backend, c, path, threads))) for c in PEERS]
                peers = [(c, r) for c, r in peers if r and "ops" in r]
                if not (starter or bare or peers):
                    continue
                best = max(peers, key=lambda p: p[1]["ops"]) if peers else None
                peer_name = "–"
                if best:
                    note = NOTES.get((best[0], backend))
                    used_notes.update([note] if note else [])
                    peer_name = CONTENDERS[best[0]] + (f" ({note})" if note else "")
                label = "first delivery" if path == "First" else "duplicate"
                out.append(f"| {backend} | {label} | {threads} | {ops(starter)} | {us(starter, 'p99.0')} "
                           f"| {ops(bare)} | {ratio(starter, bare)} | {peer_name} "
                           f"| {ops(best[1]) if best else '–'} | {ratio(starter, best[1]) if best else '–'} |")
    out.append("")
    for note in sorted(used_notes):
        out.append(f"({note}) {FOOTNOTES[note]}  ")
    out.append("")
    overhead = []
    for path in ("First", "Duplicate"):
        starter = results.get(("memory", "starter", path, 1))
        bare = results.get(("memory", "bare", path, 1))
        if starter and bare and "ops" in starter and "ops" in bare:
            cost = 1e6 / starter["ops"] - 1e6 / bare["ops"]
            overhead.append(f"{'first delivery' if path == 'First' else 'duplicate'} "
                            f"{cost:.2f} µs per call")
    plain = results.get(("memory", "plain", "Call", 1))
    if overhead:
        line = "Aspect overhead at 1 thread (proxied `@Idempotent` minus the same store steps by hand, memory store): " \
               + "; ".join(overhead) + "."
        if plain and "ops" in plain:
            line += f" The unproxied method alone: {1e6 / plain['ops']:.3f} µs per call."
        out.append(line)
        out.append("")
    out.append("All results (µs per operation from sample-time mode):")
    out.append("")
    out.append("| backend | contender | path | threads | ops/s | mean µs | p50 µs | p99 µs | p99.9 µs |")
    out.append("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for key in sorted(results, key=lambda k: (list(BACKENDS.values()).index(k[0]), k[2], list(CONTENDERS).index(k[1]), k[3])):
        backend, contender, path, threads = key
        row = results[key]
        out.append(f"| {backend} | {CONTENDERS[contender]} | {path.lower()} | {threads} | {ops(row)} "
                   f"| {us(row, 'mean')} | {us(row, 'p50.0')} | {us(row, 'p99.0')} | {us(row, 'p99.9')} |")
    if any(r.get("derived") for r in results.values()):
        out.append("")
        out.append("~ ops/s derived from sample-time mode (threads / mean time per operation): the run had no "
                   "throughput mode.")
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
