#!/bin/sh
# The container's one job: clone REPO_URL (at BASE, the remote's default branch without it), run
# AGENT in a fresh isolate worktree (POLICY, else the agent's own profile), push the job's branch
# to the remote (PUSH_REMOTE, default origin), and exit with the job's status. GIT_TOKEN, when
# set, is the password git gives an https remote (the job itself never sees it: isolate removes
# secret variables, and the push is made from the clone, outside the sandbox).
set -eu
: "${REPO_URL:?set REPO_URL to the repository to work on}"
: "${AGENT:?set AGENT to the agent's command line}"
WORKDIR="${WORKDIR:-$HOME/work}"
PUSH_REMOTE="${PUSH_REMOTE:-origin}"
if [ -n "${GIT_TOKEN:-}" ]; then
  # A credential helper that answers from the environment, never written to disk.
  git config --global credential.helper \
    '!f() { test "$1" = get && echo username=x-access-token && echo "password=$GIT_TOKEN"; }; f'
fi
git config --global user.name "${GIT_AUTHOR_NAME:-isolate agent}"
git config --global user.email "${GIT_AUTHOR_EMAIL:-agent@isolate.invalid}"
rm -rf "$WORKDIR"
git clone --quiet ${BASE:+--branch "$BASE"} -- "$REPO_URL" "$WORKDIR"
cd "$WORKDIR"
isolate doctor >&2 || exit 125
# shellcheck disable=SC2086 # AGENT is a command line, split as the shell splits it
exec isolate run --worktree --push "$PUSH_REMOTE" ${POLICY:+--policy "$POLICY"} -- sh -c "$AGENT"
