#!/usr/bin/env bash
# Builds the container image from the repository's Dockerfile (what
# `make image` runs). Prints the image reference.
#
#   build.sh IMAGE              e.g. masakari-operator:0.1.0
#   IMAGE_TOOL=docker|buildah|podman   force an engine; by default docker when
#                               `docker info` answers (a CLI without an engine
#                               does not count), else buildah, else podman,
#                               else buildah installed from Debian
#   BASE_IMAGE=REF              base for the Dockerfile's BASE_IMAGE; by default
#                               the Dockerfile's pinned public node image, except
#                               with buildah/podman when no registry answers:
#                               then hack/image/build-base.sh builds one locally
#   IMAGE_ARCHIVE=FILE          also write the image as a docker-archive tarball
#                               (what `ctr images import` loads into a node)
#   IMAGE_OCI_ARCHIVE=FILE      also write the image as an OCI image layout
#                               tarball (what `make release` ships; `ctr images
#                               import`, `skopeo copy oci-archive:` and
#                               `podman load` read it). Its index.json names the
#                               manifest whose digest a registry or containerd
#                               reports for the image.
#
# buildah and podman run the build with host networking (npm ci reaches the
# npm registry) and chroot isolation (no nested runc needed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/common.sh"
image=${1:?usage: build.sh IMAGE}
version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$root/package.json")
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)

tool=${IMAGE_TOOL:-}
if [ -z "$tool" ]; then
  if command -v docker >/dev/null && docker info >/dev/null 2>&1; then tool=docker
  elif command -v buildah >/dev/null; then tool=buildah
  elif command -v podman >/dev/null; then tool=podman
  else ensure_packages buildah; tool=buildah
  fi
fi

base_args=()
if [ -n "${BASE_IMAGE:-}" ]; then
  base_args=(--build-arg "BASE_IMAGE=$BASE_IMAGE")
elif [ "$tool" != docker ]; then
  default_base=$(sed -n 's/^ARG BASE_IMAGE=//p' "$root/Dockerfile")
  if ! "$tool" pull --quiet "$default_base" >/dev/null 2>&1; then
    echo "build.sh: cannot pull $default_base; building a local base (hack/image/build-base.sh)" >&2
    base_args=(--build-arg "BASE_IMAGE=$(IMAGE_TOOL=$tool "$here/build-base.sh")")
  fi
fi

labels=(--build-arg "VERSION=$version" --build-arg "REVISION=$revision")
# buildah and podman reuse a cached LABEL step even when the build args in it
# changed, which would leave an earlier commit's revision on the image: the
# labels are set again at commit time, where the cache does not reach.
[ "$tool" = docker ] || labels+=(--label "org.opencontainers.image.version=$version" --label "org.opencontainers.image.revision=$revision")
# The CA bundle the host's npm trusts (a TLS-intercepting proxy's CA, say),
# as the Dockerfile's npm-ca build secret; an empty file when there is none.
ca=$(npm config get cafile 2>/dev/null || true)
[ -n "$ca" ] && [ "$ca" != null ] && [ -s "$ca" ] || ca=${NODE_EXTRA_CA_CERTS:-}
secret_file=$(mktemp)
trap 'rm -f "$secret_file"' EXIT
[ -n "$ca" ] && [ -s "$ca" ] && cat "$ca" >"$secret_file"
secret=(--secret "id=npm-ca,src=$secret_file")
# One build at a time (.ci/run starts one in the background; the cluster suite
# may ask for the same image before it is done): the second one waits, then
# finds every layer cached.
if command -v flock >/dev/null; then
  exec {lock}>"${TMPDIR:-/tmp}/masakari-operator-image-build.$(id -u).lock"
  flock "$lock"
fi
echo "building $image with $tool..." >&2
case "$tool" in
  docker) DOCKER_BUILDKIT=1 docker build "${base_args[@]}" "${labels[@]}" "${secret[@]}" -t "$image" "$root" >&2 ;;
  buildah) buildah build --layers --pull=never --network host --isolation chroot "${base_args[@]}" "${labels[@]}" "${secret[@]}" -t "$image" "$root" >&2 ;;
  podman) podman build --layers --pull=never --network host --isolation chroot "${base_args[@]}" "${labels[@]}" "${secret[@]}" -t "$image" "$root" >&2 ;;
  *) echo "build.sh: IMAGE_TOOL must be docker, buildah or podman" >&2; exit 1 ;;
esac

# A fully qualified name, so containerd (which normalises `name:tag` to
# docker.io/library/name:tag) finds the image the chart asks for.
# Only a first component before a slash can be a registry (`name:tag` alone is not).
qualified=docker.io/library/$image
if [[ "$image" == */* ]]; then
  case "${image%%/*}" in *.*|*:*|localhost) qualified=$image ;; *) qualified=docker.io/$image ;; esac
fi
if [ -n "${IMAGE_ARCHIVE:-}" ]; then
  rm -f "$IMAGE_ARCHIVE"
  case "$tool" in
    docker) docker tag "$image" "$qualified" && docker save -o "$IMAGE_ARCHIVE" "$qualified" ;;
    *) "$tool" push --quiet "$image" "docker-archive:$IMAGE_ARCHIVE:$qualified" >&2 ;;
  esac
fi
if [ -n "${IMAGE_OCI_ARCHIVE:-}" ]; then
  rm -f "$IMAGE_OCI_ARCHIVE"
  case "$tool" in
    # buildx exports the build result itself (cached layers make it quick);
    # `docker save` writes an OCI layout only from Docker 25 on.
    docker) DOCKER_BUILDKIT=1 docker buildx build "${base_args[@]}" "${labels[@]}" "${secret[@]}" \
      --output "type=oci,dest=$IMAGE_OCI_ARCHIVE,name=$qualified" "$root" >&2 ;;
    *)
      "$tool" push --quiet "$image" "oci-archive:$IMAGE_OCI_ARCHIVE:$qualified" >&2
      # buildah and podman name the manifest only by org.opencontainers.image.ref.name,
      # which `ctr images import` shortens to name:tag, a name the kubelet never asks
      # for; containerd's own annotation keeps the qualified name. index.json is
      # not content-addressed: the manifest digest stays the same.
      oci=$(mktemp -d)
      tar -xf "$IMAGE_OCI_ARCHIVE" -C "$oci"
      "$root/node_modules/.bin/node" -e '
        const fs = require("fs"), [file, name] = process.argv.slice(1);
        const index = JSON.parse(fs.readFileSync(file, "utf8"));
        for (const m of index.manifests) m.annotations = { ...m.annotations, "io.containerd.image.name": name };
        fs.writeFileSync(file, JSON.stringify(index));' "$oci/index.json" "$qualified"
      tar -cf "$IMAGE_OCI_ARCHIVE" -C "$oci" oci-layout index.json blobs
      rm -rf "$oci"
      ;;
  esac
fi
echo "$image"
