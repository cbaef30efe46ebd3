#!/usr/bin/env bash
# Claims while the jdbc store's cleanup runs: fills the starter's table with ROWS expired
# records (10,000,000 unless given), then measures the claim's p50 and p99 (the starter's
# first delivery and duplicate, 4 threads, JMH sample time) in four phases, one JMH run
# each, in this order:
#   empty   no expired rows (the table truncated: a table the rows never filled)
#   before  ROWS expired rows, no cleanup
#   during  ROWS expired rows, the auto-configured cleanup running at its default pace
#   after   the rest removed at full speed, the table vacuumed and analyzed
# and prints one line per phase, the ratios during / before and before / empty (ROWS
# against an empty table), and the rows the cleanup removed a second while it ran.
# PHASES=alternating instead runs one trial in which the cleanup runs through every other
# iteration, and compares the iterations with it and without it (paired in time, so that
# the machine's and the table's drift falls on both; ITERATIONS should be even), and
# PHASES=flat one trial without cleanup in which every other iteration claims in a second
# application whose table (idempotency_record_empty) holds none of the rows, and compares
# the iterations on ROWS rows with those on the empty table, paired in the same way. The
# servers are found as by run.sh (IDEMPOTENCY_TEST_POSTGRES_URL and
# IDEMPOTENCY_TEST_MARIADB_URL, else the standard local addresses). Run it on an idle
# machine.
#
#   benchmarks/cleanup.sh [ROWS] [postgresql|mariadb|both]
#
# THREADS (4), WARMUPS (2), ITERATIONS (5) and RUN_SECONDS (2, per iteration) change the
# timing; PHASES="before during" runs only those (a ratio is printed when both of its phases
# ran). The cleanup runs at the starter's defaults (docs/stores.md); CLEANUP passes other
# settings to the benchmark's application, e.g.
# CLEANUP="-Didempotency.jdbc.cleanup.duty-cycle=0.2 -Didempotency.jdbc.cleanup.batch-size=500".
# JAVA_OPTS goes to the JMH runner (e.g. -Djmh.ignoreLock=true when another JMH run holds
# /tmp/jmh.lock).
set -euo pipefail

rows="${1:-10000000}"
which="${2:-both}"
case "$which" in
	both) databases="postgresql mariadb" ;;
	postgresql | mariadb) databases="$which" ;;
	*) echo "usage: $0 [rows] [postgresql|mariadb|both]" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.."
./mvnw -q -B -pl benchmarks -am package dependency:build-classpath -DskipTests -Djapicmp.skip=true \
	-Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime
out=benchmarks/target/cleanup
mkdir -p "$out"
rm -rf "$out/classes" "$out"/*.json "$out"/*.log
cp -r benchmarks/target/classes "$out/classes"
classpath="$out/classes:$(cat benchmarks/target/classpath.txt)"
java -cp "$classpath" io.github.idempotency.benchmarks.Servers

for database in $databases; do
	for phase in ${PHASES:-empty before during after}; do
		echo "$database $phase: $(date -u +%H:%M:%S)" >&2
		java ${JAVA_OPTS:-} -cp "$classpath" org.openjdk.jmh.Main 'CleanupBenchmark\.starter(First|Duplicate)$' \
			-p database="$database" -p phase="$phase" -p rows="$rows" \
			-bm sample -tu us -t "${THREADS:-4}" -f 1 -wi "${WARMUPS:-2}" -w "${RUN_SECONDS:-2}s" \
			-i "${ITERATIONS:-5}" -r "${RUN_SECONDS:-2}s" \
			-jvmArgs "-Xms1g -Xmx1g -Djmh.shutdownTimeout=0 -Djmh.shutdownTimeout.step=0 ${CLEANUP:-}" \
			-rf json -rff "$out/$database-$phase.json" >"$out/$database-$phase.log"
	done
done

python3 - "$out" "$rows" $databases <<'PY'
import json, os, re, sys
out, rows, databases = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
phases = [p for p in ['empty', 'before', 'during', 'after', 'alternating', 'flat']
          if all(os.path.exists(os.path.join(out, f'{d}-{p}.json')) for d in databases)]
warmups = int(os.environ.get('WARMUPS', '2'))
def percentile(histogram, q):
    total, seen = sum(histogram.values()), 0
    for value in sorted(histogram):
        seen += histogram[value]
        if seen >= q * total:
            return value
def percentiles(database, phase, cleanup=None):
    """p50 and p99 per benchmark; in the phases that alternate, of the measured iterations
    with the cleanup, or on the rows in phase flat (cleanup=True: the warm-ups and
    measurements counted together, every second one), or of the others"""
    result = {}
    for r in json.load(open(os.path.join(out, f'{database}-{phase}.json'))):
        name = r['benchmark'].rsplit('.', 1)[1]
        if cleanup is None:
            p = r['primaryMetric']['scorePercentiles']
            result[name] = (p['50.0'], p['99.0'])
            continue
        merged = {}
        for fork in r['primaryMetric']['rawDataHistogram']:
            for i, iteration in enumerate(fork):
                if ((warmups + i) % 2 == 1) == cleanup:
                    for value, count in iteration:
                        merged[value] = merged.get(value, 0) + count
        result[name] = (percentile(merged, 0.5), percentile(merged, 0.99))
    return result
print(f'{rows:,} expired rows, {os.environ.get("THREADS", "4")} threads, claim latency in µs')
for database in databases:
    found = {phase: percentiles(database, phase) for phase in phases if phase not in ('alternating', 'flat')}
    if 'alternating' in phases:
        found['alternating without'] = percentiles(database, 'alternating', False)
        found['alternating with'] = percentiles(database, 'alternating', True)
    if 'flat' in phases:
        found['flat empty'] = percentiles(database, 'flat', False)
        found['flat rows'] = percentiles(database, 'flat', True)
    for phase in found:
        cells = '  '.join(f'{name[7:].lower()} p50 {p50:8.0f} p99 {p99:8.0f}'
                          for name, (p50, p99) in sorted(found[phase].items()))
        print(f'{database:10} {phase:6}  {cells}')
    for name in sorted(found.get('before', {})):
        kind = name[7:].lower()
        if 'during' in found:
            print(f'{database:10} {kind:9} p99 during / before {found["during"][name][1] / found["before"][name][1]:.2f}')
        if 'empty' in found:
            print(f'{database:10} {kind:9} p99 {rows:,} rows / empty {found["before"][name][1] / found["empty"][name][1]:.2f}')
    if 'alternating' in phases:
        for name in sorted(found['alternating with']):
            ratio = found['alternating with'][name][1] / found['alternating without'][name][1]
            print(f'{database:10} {name[7:].lower():9} p99 with / without the cleanup, iterations alternated {ratio:.2f}')
    if 'flat' in phases:
        for name in sorted(found['flat rows']):
            ratio = found['flat rows'][name][1] / found['flat empty'][name][1]
            print(f'{database:10} {name[7:].lower():9} p99 {rows:,} rows / an empty table, iterations alternated {ratio:.2f}')
    for phase in ('during', 'alternating'):
        if phase not in phases:
            continue
        for line in open(os.path.join(out, f'{database}-{phase}.log')):
            cleanup = re.search(r'cleanup: \d+ rows.*', line)
            if cleanup:
                print(f'{database:10} {cleanup.group(0)}')
PY
echo "results: $out/"
