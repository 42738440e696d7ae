#!/usr/bin/env bash
# The Medik8s NodeHealthCheck operator as a container image, for the
# real-cluster suite (test/cluster/remediation-nhc.test.ts): the binary hack/nhc/build.sh
# builds, on the Debian bookworm base hack/image/build-base.sh builds from
# Debian packages (no container registry involved), saved as a docker-archive
# (what `ctr images import` loads into the node). Prints the archive's path;
# the image is localhost/medik8s-nhc:<commit>.
#
#   MASAKARI_NHC_SNAPSHOT, MASAKARI_ASSETS   as for hack/nhc/build.sh
#   IMAGE_TOOL                              buildah (default) or podman
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../image/common.sh"
out=$("$here/build.sh")
commit=$(cat "$out/COMMIT")
image="localhost/medik8s-nhc:$commit"
archive="$out/image.tar"
if command -v flock >/dev/null; then exec {lock}>"$out/.image.lock"; flock "$lock"; fi
if [ ! -s "$archive" ] || [ "$out/nhc" -nt "$archive" ]; then
  ensure_packages buildah
  tool=${IMAGE_TOOL:-buildah}
  base=$(IMAGE_TOOL=$tool "$here/../image/build-base.sh")
  echo "building $image on $base..." >&2
  ctr=$(buildah from --quiet "$base")
  buildah copy --quiet "$ctr" "$out/nhc" /usr/local/bin/nhc >/dev/null
  # NHC's image runs as a non-root user with the manager as entrypoint
  buildah config --entrypoint '["/usr/local/bin/nhc"]' --cmd '[]' --user 65532:65532 \
    --label "org.opencontainers.image.source=https://github.com/medik8s/node-healthcheck-operator" \
    --label "org.opencontainers.image.revision=$commit" "$ctr"
  buildah commit --quiet --rm "$ctr" "$image" >/dev/null
  rm -f "$archive.tmp"
  buildah push --quiet "$image" "docker-archive:$archive.tmp:$image"
  mv "$archive.tmp" "$archive"
fi
echo "$archive"
