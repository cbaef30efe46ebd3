#!/usr/bin/env bash
# Makes sure a local 3-master Redis Cluster answers (starting and creating it when it does
# not), then prints the environment the cluster tests read. Safe to run again.
# Use from .ci/run:  eval "$(.ci/redis-cluster.sh)"
set -euo pipefail
PORTS=(7101 7102 7103)
DIR=/tmp/idempotency-redis-cluster
log() { echo "redis-cluster: $*" >&2; }
ping() { [[ "$(redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null)" == PONG* ]]; }
state_ok() { [[ "$(redis-cli -h 127.0.0.1 -p "${PORTS[0]}" cluster info 2>/dev/null)" == *cluster_state:ok* ]]; }

if ! state_ok; then
  for port in "${PORTS[@]}"; do
    if ! ping "$port"; then
      mkdir -p "$DIR/$port"
      log "starting redis-server on $port"
      redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes \
        --cluster-config-file "$DIR/$port/nodes.conf" --cluster-node-timeout 5000 \
        --save "" --appendonly no --dir "$DIR/$port" --daemonize yes \
        --logfile "$DIR/$port/redis.log" >&2
    fi
  done
  for port in "${PORTS[@]}"; do
    for _ in $(seq 1 50); do ping "$port" && break; sleep 0.1; done
    ping "$port" || { log "redis-server on $port did not come up (see $DIR/$port/redis.log)"; exit 1; }
  done
  known=$(redis-cli -h 127.0.0.1 -p "${PORTS[0]}" cluster info | sed -n 's/^cluster_known_nodes:\([0-9]*\).*/\1/p')
  if [ "${known:-1}" -lt "${#PORTS[@]}" ]; then
    log "creating the cluster"
    redis-cli --cluster create $(printf '127.0.0.1:%s ' "${PORTS[@]}") --cluster-replicas 0 --cluster-yes >&2
  fi
  for _ in $(seq 1 100); do state_ok && break; sleep 0.1; done
  state_ok || { log "the cluster did not reach cluster_state:ok"; exit 1; }
fi
echo "export IDEMPOTENCY_TEST_REDIS_CLUSTER_NODES='$(printf '127.0.0.1:%s,' "${PORTS[@]}" | sed 's/,$//')'"
