#!/usr/bin/env bash
# Old and new side by side: builds the benchmarks of a git ref (in a worktree under
# benchmarks/target/compare/) and of this checkout, then runs the same JMH benchmarks
# alternately, old then new, for ROUNDS rounds (2 unless set), each fork on its own, and
# prints each benchmark's scores and the ratio of the means, new / old. Run it on an idle
# machine; the servers are found as by run.sh.
#
#   benchmarks/compare.sh <git ref> <JMH regexp> [JMH options, e.g. -p batch=100]
set -euo pipefail

ref="$1"
filter="$2"
shift 2
cd "$(dirname "$0")/.."
root="$PWD"
out="$root/benchmarks/target/compare"
mkdir -p "$out"
build() { # a checkout, a name: its classes and classpath, copied, so that rebuilding does not change them
	(cd "$1" && ./mvnw -q -B -pl benchmarks -am package dependency:build-classpath -DskipTests \
		-Djapicmp.skip=true -Dmaven.javadoc.skip=true \
		-Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime)
	rm -rf "$out/$2" && mkdir -p "$out/$2/jars"
	cp -r "$1/benchmarks/target/classes" "$out/$2/classes"
	local cp="$out/$2/classes" entry
	for entry in $(tr ':' ' ' < "$1/benchmarks/target/classpath.txt"); do
		if [[ "$entry" == "$1"/* ]]; then
			cp "$entry" "$out/$2/jars/" && entry="$out/$2/jars/$(basename "$entry")"
		fi
		cp="$cp:$entry"
	done
	echo "$cp" > "$out/$2/classpath"
}
rm -rf "$out/worktree"
git worktree prune
git worktree add -q --detach "$out/worktree" "$ref"
build "$out/worktree" old
git worktree remove --force "$out/worktree"
build "$root" new
rm -f "$out"/*.json
for round in $(seq 1 "${ROUNDS:-2}"); do
	for version in old new; do
		java -cp "$(cat "$out/$version/classpath")" org.openjdk.jmh.Main "$filter" "$@" \
			-f 1 -wi 3 -w 1s -i 4 -r 2s -t 1 -bm thrpt -tu ms \
			-rf json -rff "$out/$version-$round.json" > "$out/$version-$round.log"
	done
done
python3 - "$out" <<'PY'
import collections, glob, json, os, sys
scores = collections.defaultdict(lambda: collections.defaultdict(list))
for path in sorted(glob.glob(os.path.join(sys.argv[1], '*.json'))):
    version = os.path.basename(path).split('-')[0]
    for result in json.load(open(path)):
        name = '.'.join(result['benchmark'].split('.')[-2:])
        scores[name][version].append(result['primaryMetric']['score'])
print('| benchmark | old ops/ms, each round | new ops/ms, each round | new / old |')
print('|---|--:|--:|--:|')
for name, by in sorted(scores.items()):
    old, new = by['old'], by['new']
    if old and new:
        ratio = (sum(new) / len(new)) / (sum(old) / len(old))
        print(f"| {name} | {' / '.join(f'{s:.3f}' for s in old)} | {' / '.join(f'{s:.3f}' for s in new)} | {ratio:.2f} |")
PY
