#!/usr/bin/env bash
# bench/compat.sh: the compatibility benchmark. Real projects (bench/compat/projects/, their
# dependencies from the registries) run step by step bare and under isolate's policies; prints the
# matrix, the pass rates and the median overhead (bench/README.md, "Compatibility").
#
#   bench/compat.sh [--install] [--user NAME] [OPTIONS of bench/compat/compat.py]
#
# --install     install the Debian packages the projects need (apt-get; root), then go on
# --user NAME   run the benchmark as the ordinary user NAME (created with useradd if missing;
#               root only); ISOLATE must then be a binary NAME can execute
# Everything else goes to bench/compat/compat.py (--help lists it: --policies, --projects,
# --steps, --tier landlock|auto, --isolate, --work, --timeout, --out, --list).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# Debian packages, by the command each brings: the toolchains and services the projects use.
# Only those whose command is missing are installed (a node or python of another origin stays).
# Rust comes from rustup and is not installed here.
packages=(node:nodejs npm:npm python3:python3 pip3:python3-pip go:golang-go gcc:gcc make:make
	cmake:cmake redis-server:redis-server chromium:chromium tmux:tmux curl:curl git:git
	strace:strace)

install=0
user=
args=()
while (($#)); do
	case $1 in
	--install) install=1 ;;
	--user) user=$2; shift ;;
	--user=*) user=${1#--user=} ;;
	*) args+=("$1") ;;
	esac
	shift
done

if ((install)); then
	[[ $(id -u) == 0 ]] || { echo "compat.sh: --install needs root" >&2; exit 1; }
	want=(python3-venv)
	for p in "${packages[@]}"; do
		command -v "${p%%:*}" >/dev/null || want+=("${p#*:}")
	done
	# PostgreSQL's programs are not on PATH; each step starts a cluster of its own.
	compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || want+=(postgresql)
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${want[@]}"
fi

if [[ -n $user ]]; then
	[[ $(id -u) == 0 ]] || { echo "compat.sh: --user needs root" >&2; exit 1; }
	id "$user" >/dev/null 2>&1 || useradd -m -s /bin/bash "$user"
	home=$(getent passwd "$user" | cut -d: -f6)
	# The benchmark's own files must be readable by the user: run from a copy it owns.
	copy="$home/compat-bench"
	rm -rf "$copy"
	mkdir -p "$copy"
	cp -r "$here/compat" "$here/compat.sh" "$copy/"
	chown -R "$user:" "$copy"
	exec runuser -u "$user" -- env -i HOME="$home" USER="$user" LOGNAME="$user" \
		PATH="$home/.cargo/bin:/usr/local/bin:/usr/bin:/bin" TERM="${TERM:-dumb}" \
		${ISOLATE:+ISOLATE="$ISOLATE"} \
		python3 "$copy/compat/compat.py" "${args[@]}"
fi

exec python3 "$here/compat/compat.py" "${args[@]}"
