#!/usr/bin/env bash
# The pinned side-by-side comparison of docs/benchmarks.md: PostgreSQL and Redis on core 1,
# the benchmark JVM on core 0, throughput mode, several forks, at 1 and 4 threads, for the
# first-delivery and duplicate paths of the starter, the bare protocol and the peers.
# Run it on an idle machine; pinning the servers needs the right to change their affinity
# (run as their owner or root). Results: benchmarks/target/jmh/pinned-t<threads>.json/.log.
#
#   benchmarks/pinned.sh [JMH benchmark regexp] [forks]
set -euo pipefail

filter="${1:-(RedisBenchmark|JdbcBenchmark)\.(starter|bare|bareSelect|springIntegration|camel)(First|Duplicate)$}"
forks="${2:-4}"
cd "$(dirname "$0")/.."

./mvnw -q -B -pl benchmarks -am package dependency:build-classpath -DskipTests \
	-Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime
out=benchmarks/target/jmh
mkdir -p "$out"
rm -rf "$out/classes-pinned"
cp -r benchmarks/target/classes "$out/classes-pinned"
classpath="$out/classes-pinned:$(cat benchmarks/target/classpath.txt)"
java -cp "$classpath" io.github.idempotency.benchmarks.Servers

for p in $(pgrep postgres || true); do taskset -p -c 1 "$p" >/dev/null || true; done
for p in $(pgrep redis-server || true); do taskset -a -p -c 1 "$p" >/dev/null || true; done
for threads in 1 4; do
	result="$out/pinned-t$threads.json"
	taskset -c 0 java -cp "$classpath" org.openjdk.jmh.Main "$filter" \
		-bm thrpt -f "$forks" -wi 5 -w 2s -i 4 -r 2s -t "$threads" -tu s \
		-jvmArgs "-Xms1g -Xmx1g -Djmh.shutdownTimeout=0 -Djmh.shutdownTimeout.step=0" \
		-rf json -rff "$result" >"${result%.json}.log"
	grep -E '^[A-Z][A-Za-z]+Benchmark\.[A-Za-z]+ ' "${result%.json}.log" || true
done
