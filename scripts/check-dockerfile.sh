#!/bin/sh
# check-dockerfile.sh runs the Dockerfile's build command (its `go build`
# RUN line, with its flags and build arguments) in a temporary directory,
# as no container engine is available in CI, then checks that the binary
# is static and starts. Usage: scripts/check-dockerfile.sh [REPO_ROOT]
set -eu
root=$(cd "${1:-$(dirname "$0")/..}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmd=$(sed -n 's/^RUN \(CGO_ENABLED=0 .*go build .*\)$/\1/p' "$root/Dockerfile")
if [ -z "$cmd" ]; then
	echo "check-dockerfile: no 'RUN CGO_ENABLED=0 ... go build' line in the Dockerfile" >&2
	exit 1
fi
# The build stage copies the repository to /src and writes /out; here a
# copy in the temporary directory stands for /src and $work/out for /out.
mkdir -p "$work/src" "$work/out"
(cd "$root" && tar cf - --exclude=./.git --exclude=./e2e/node_modules .) | (cd "$work/src" && tar xf -)
cmd=$(printf '%s' "$cmd" | sed "s#/out/#$work/out/#g")
(cd "$work/src" && VERSION=0.1.0-check COMMIT=check sh -ec "$cmd")
bin="$work/out/mcpgate"
if command -v file >/dev/null 2>&1 && ! file "$bin" | grep -q 'statically linked'; then
	echo "check-dockerfile: $bin is not statically linked: $(file "$bin")" >&2
	exit 1
fi
"$bin" version | grep -q '0.1.0-check (commit check' || { echo "check-dockerfile: the -X flags did not set the version" >&2; exit 1; }
"$bin" help healthcheck >/dev/null
echo "check-dockerfile: ok ($bin)"
