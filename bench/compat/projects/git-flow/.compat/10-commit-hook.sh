. .compat/common.sh
# A pre-commit hook the job installs in its own repository, as pre-commit does.
hooks=$(git rev-parse --git-path hooks)
mkdir -p "$hooks"
printf '#!/bin/sh\necho hook ran >&2\n' >"$hooks/pre-commit"
chmod +x "$hooks/pre-commit"
echo hooked >>NOTES
git -c core.hooksPath="$hooks" commit -q -am 'with hook' 2>&1 | grep -q 'hook ran'
echo hook ok
