#!/usr/bin/env bash
# Builds the benchmarks module and runs the JMH benchmarks at 1 and 8 threads against
# PostgreSQL and Redis (found as the tests find them, but never in containers); writes the
# JSON results and a markdown summary under benchmarks/target/jmh/.
#
#   benchmarks/run.sh [quick|full|pinned] [JMH benchmark regexp]
#
# quick: sample-time mode for every benchmark (ops/s derived as threads / mean time, so one
#        fork per benchmark gives both columns; the plain call, too short to time one by one,
#        in throughput mode), 1 s warm-up + 1 s measured, fork 1: under 5 minutes on 2 cores.
# full:  throughput and sample-time modes for every benchmark, 2 x 2 s warm-up,
#        4 x 3 s measured, fork 1 (about 35 minutes).
# pinned: the side-by-side comparison of docs/benchmarks.md: PostgreSQL and Redis on core
#        1, the benchmark JVM on core 0, throughput, at 1 and 4 threads, 5 x 2 s warm-up,
#        4 x 2 s measured, FORKS forks (4 unless set), by default the first-delivery and
#        duplicate paths of the starter, the bare protocol and the peers. Run it on an idle
#        machine; pinning the servers needs the right to change their affinity.
set -euo pipefail

mode="${1:-quick}"
filter="${2:-.}"
case "$mode" in
	quick) timing=(-f 1 -wi 1 -w 1s -i 1 -r 1s) ;;
	full) timing=(-f 1 -wi 2 -w 2s -i 4 -r 3s) ;;
	pinned)
		timing=(-f "${FORKS:-4}" -wi 5 -w 2s -i 4 -r 2s)
		[ "$filter" = . ] && filter='(RedisBenchmark|JdbcBenchmark)\.(starter|bare|bareSelect|springIntegration|camel)(First|Duplicate)$'
		;;
	*) echo "usage: $0 [quick|full|pinned] [JMH benchmark regexp]" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.."

./mvnw -q -B -pl benchmarks -am package dependency:build-classpath -DskipTests \
	-Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime
out=benchmarks/target/jmh
mkdir -p "$out"
# the run uses its own copy of the classes, so rebuilding meanwhile does not change it
rm -rf "$out/classes-$mode"
cp -r benchmarks/target/classes "$out/classes-$mode"
classpath="$out/classes-$mode:$(cat benchmarks/target/classpath.txt)"
# PostgreSQL and Redis: IDEMPOTENCY_TEST_POSTGRES_URL and IDEMPOTENCY_TEST_REDIS_URL, else
# the standard local addresses; stop here, saying so, when neither answers
java -cp "$classpath" io.github.idempotency.benchmarks.Servers
on=()
if [ "$mode" = pinned ]; then
	for p in $(pgrep postgres || true); do taskset -p -c 1 "$p" >/dev/null || true; done
	for p in $(pgrep redis-server || true); do taskset -a -p -c 1 "$p" >/dev/null || true; done
	on=(taskset -c 0)
fi

rm -f "$out/$mode"-*.json "$out/$mode"-*.log
results=()
run() { # threads, name, JMH options; nothing when the filter leaves no benchmark
	local threads="$1" result="$out/$mode-t$1-$2.json"
	shift 2
	[[ "$(java -cp "$classpath" org.openjdk.jmh.Main "$filter" "$@" -l)" == *Benchmark.* ]] || return 0
	# Lettuce's shutdown leaves a non-daemon Netty thread for a second: let each fork exit
	# as soon as its results are in
	"${on[@]}" java -cp "$classpath" org.openjdk.jmh.Main "$filter" "$@" "${timing[@]}" -t "$threads" -tu us \
		-jvmArgs "-Xms1g -Xmx1g -Djmh.shutdownTimeout=0 -Djmh.shutdownTimeout.step=0" \
		-rf json -rff "$result" >"${result%.json}.log"
	grep -E '^[A-Z][A-Za-z]+Benchmark\.[A-Za-z]+ ' "${result%.json}.log" || true
	results+=("$result")
}
threads_list="1 8"
[ "$mode" = pinned ] && threads_list="1 4"
for threads in $threads_list; do
	if [ "$mode" = pinned ]; then
		run "$threads" thrpt -bm thrpt
	elif [ "$mode" = quick ]; then
		run "$threads" sample -bm sample -e '\.plainCall$'
		run "$threads" plain -bm thrpt -e '\.(starter|bare|springIntegration|camel)[A-Z]'
	else
		run "$threads" all -bm thrpt,sample
	fi
done
python3 benchmarks/summarize.py "${results[@]}" > "$out/$mode.md"
cat "$out/$mode.md"
echo "results: ${results[*]}; summary: $out/$mode.md"
