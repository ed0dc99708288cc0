#!/usr/bin/env bash
# start-postgres.sh starts a throwaway PostgreSQL server for tests on
# 127.0.0.1 and a free port, installing Debian's postgresql first when it is
# missing. It must run as root (initdb itself runs as the postgres user).
#
# It prints exactly one line on stdout, so callers can write
#   eval "$(scripts/start-postgres.sh)"
# Progress goes to stderr. The server keeps running after the script exits;
# the stderr output says how to stop it.
set -euo pipefail

log() { echo "start-postgres: $*" >&2; }

find_bin() {
	local d
	for d in /usr/lib/postgresql/*/bin; do
		if [[ -x "$d/initdb" ]]; then
			echo "$d"
		fi
	done | sort -V | tail -n 1
}

PGBIN=$(find_bin)
if [[ -z "$PGBIN" ]]; then
	log "installing postgresql"
	apt-get update >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql >&2
	PGBIN=$(find_bin)
fi
if [[ -z "$PGBIN" ]]; then
	log "no initdb found under /usr/lib/postgresql after installing"
	exit 1
fi

DIR=$(mktemp -d -t mcpgate-pg.XXXXXX)
chown postgres:postgres "$DIR"
log "initdb in $DIR/data"
runuser -u postgres -- "$PGBIN/initdb" -D "$DIR/data" -U postgres -A trust -E UTF8 --no-sync >"$DIR/initdb.log" 2>&1 || {
	cat "$DIR/initdb.log" >&2
	exit 1
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

for attempt in 1 2 3 4 5 6 7 8 9 10; do
	PORT=$((20000 + RANDOM % 20000))
	if port_in_use "$PORT"; then
		continue
	fi
	if runuser -u postgres -- "$PGBIN/pg_ctl" -D "$DIR/data" -l "$DIR/log" -w \
		-o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >&2; then
		log "running on 127.0.0.1:$PORT (attempt $attempt); stop with:"
		log "  runuser -u postgres -- $PGBIN/pg_ctl -D $DIR/data stop -m fast"
		echo "export MCPGATE_TEST_POSTGRES='postgres://postgres@127.0.0.1:$PORT/postgres?sslmode=disable'"
		exit 0
	fi
	log "port $PORT failed, trying another"
done
log "could not start postgres; see $DIR/log"
exit 1
