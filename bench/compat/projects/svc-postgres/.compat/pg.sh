# shellcheck shell=bash
# pg_start LISTEN PORT: a new cluster in a scratch directory, started; psql() runs psql against it.
# PostgreSQL refuses to run as root, so as root its programs run as nobody (setpriv), as a root
# developer would with a service account.
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
as_pg() {
	if [[ $(id -u) == 0 ]]; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
	else
		"$@"
	fi
}
pg_start() {
	PGTMP=$(mktemp -d)
	if [[ $(id -u) == 0 ]]; then
		chmod 755 "$PGTMP"
		chmod o+x "$TMPDIR"
		chown nobody:nogroup "$PGTMP"
	fi
	as_pg "$PG_BIN/initdb" -A trust -U postgres -D "$PGTMP/data" >/dev/null
	as_pg "$PG_BIN/pg_ctl" -D "$PGTMP/data" -l "$PGTMP/log" -w \
		-o "-k $PGTMP -c listen_addresses='$1' -p $2" start >/dev/null || { cat "$PGTMP/log" >&2; return 1; }
	trap 'as_pg "$PG_BIN/pg_ctl" -D "$PGTMP/data" -m fast stop >/dev/null; stop_bg' EXIT
}
