#!/usr/bin/env bash
# Builds the benchmarks module and runs the JMH benchmarks at 1 and 8 threads against
# PostgreSQL and Redis (found as the tests find them, but never in containers); writes the
# JSON results and a markdown summary under benchmarks/target/jmh/.
#
#   benchmarks/run.sh [quick|full] [JMH benchmark regexp]
#
# quick: sample-time mode for every benchmark (ops/s derived as threads / mean time, so one
#        fork per benchmark gives both columns; the plain call, too short to time one by one,
#        in throughput mode), 1 s warm-up + 1 s measured, fork 1: under 5 minutes on 2 cores.
# full:  throughput and sample-time modes for every benchmark, 2 x 2 s warm-up,
#        4 x 3 s measured, fork 1 (about 35 minutes).
set -euo pipefail

mode="${1:-quick}"
filter="${2:-.}"
case "$mode" in
	quick) timing=(-f 1 -wi 1 -w 1s -i 1 -r 1s) ;;
	full) timing=(-f 1 -wi 2 -w 2s -i 4 -r 3s) ;;
	*) echo "usage: $0 [quick|full] [JMH benchmark regexp]" >&2; exit 2 ;;
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

rm -f "$out/$mode"-*.json "$out/$mode"-*.log
results=()
run() { # threads, name, JMH options; nothing when the filter leaves no benchmark
	local threads="$1" result="$out/$mode-t$1-$2.json"
	shift 2
	[[ "$(java -cp "$classpath" org.openjdk.jmh.Main "$filter" "$@" -l)" == *Benchmark.* ]] || return 0
	# Lettuce's shutdown leaves a non-daemon Netty thread for a second: let each fork exit
	# as soon as its results are in
	java -cp "$classpath" org.openjdk.jmh.Main "$filter" "$@" "${timing[@]}" -t "$threads" -tu us \
		-jvmArgs "-Xms1g -Xmx1g -Djmh.shutdownTimeout=0 -Djmh.shutdownTimeout.step=0" \
		-rf json -rff "$result" >"${result%.json}.log"
	grep -E '^[A-Z][A-Za-z]+Benchmark\.[A-Za-z]+ ' "${result%.json}.log" || true
	results+=("$result")
}
for threads in 1 8; do
	if [ "$mode" = quick ]; then
		run "$threads" sample -bm sample -e '\.plainCall$'
		run "$threads" plain -bm thrpt -e '\.(starter|bare|springIntegration|camel)[A-Z]'
	else
		run "$threads" all -bm thrpt,sample
	fi
done
python3 benchmarks/summarize.py "${results[@]}" > "$out/$mode.md"
cat "$out/$mode.md"
echo "results: ${results[*]}; summary: $out/$mode.md"
