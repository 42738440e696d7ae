#!/usr/bin/env bash
# Builds the release artifacts of the version in package.json into one
# directory (what `make release` runs). Prints that directory.
#
#   release.sh [OUT_DIR]        default dist/release/<version>
#   IMAGE_TOOL, BASE_IMAGE      as for hack/image/build.sh
#   RELEASE_BASE=REV            first commit NOT in the changelog section
#                               (default: the newest tag reachable from HEAD;
#                               without a tag the section starts at the root
#                               commit)
#
# OUT_DIR then holds (docs/install.md, "From the release artifacts"):
#   masakari-operator-<version>.oci.tar       the image, an OCI image layout
#                                             tarball named
#                                             docker.io/library/masakari-operator:<version>
#   masakari-operator-<chart version>.tgz     the chart (`helm package`), its
#                                             values.yaml pinning image.digest
#                                             to the archive's manifest digest
#   masakari-operator-<version>.cdx.json      CycloneDX SBOM of the image's
#                                             /app/node_modules (`npm sbom`)
#   masakari-operator-<version>.digest        the image's manifest digest
#   CHANGELOG-<version>.md                    the changelog section
#   SHA256SUMS                                `sha256sum -c SHA256SUMS` checks
#                                             every file above
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$root/package.json")
[ -n "$version" ] || { echo "release.sh: no version in package.json" >&2; exit 1; }
out=${1:-$root/dist/release/$version}
name=masakari-operator
image=$name:$version
chart_src=$root/charts/$name

chart_app_version=$(sed -n "s/^appVersion: '\{0,1\}\([^']*\)'\{0,1\}$/\1/p" "$chart_src/Chart.yaml")
if [ "$chart_app_version" != "$version" ]; then
  echo "release.sh: charts/$name/Chart.yaml appVersion is '$chart_app_version', package.json version is '$version'" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$out"
mkdir -p "$out"

# ---- the image, as an OCI archive --------------------------------------------
archive=$out/$name-$version.oci.tar
IMAGE_OCI_ARCHIVE=$archive "$here/../image/build.sh" "$image" >/dev/null

# The digest a registry or containerd reports for the image is the one of the
# manifest index.json points at (`ctr images import` makes it the image's
# target; a registry keeps it on `skopeo copy` as long as the layers are not
# recompressed).
mkdir -p "$work/oci"
tar -xf "$archive" -C "$work/oci"
digest=$("$root/node_modules/.bin/node" -e '
  const index = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const m = index.manifests ?? [];
  if (m.length !== 1 || m[0].mediaType !== "application/vnd.oci.image.manifest.v1+json")
    throw new Error(`expected one image manifest in index.json, found ${JSON.stringify(m)}`);
  console.log(m[0].digest);' "$work/oci/index.json")
[[ "$digest" =~ ^sha256:[0-9a-f]{64}$ ]] || { echo "release.sh: bad manifest digest '$digest'" >&2; exit 1; }
echo "$digest" >"$out/$name-$version.digest"

# ---- the chart, pinned to that digest ----------------------------------------
cp -r "$chart_src" "$work/$name"
grep -q "^  digest: ''$" "$work/$name/values.yaml" \
  || { echo "release.sh: charts/$name/values.yaml has no \"  digest: ''\" line under image" >&2; exit 1; }
sed -i "s/^  digest: ''$/  digest: '$digest'/" "$work/$name/values.yaml"
helm=$("$root/hack/helm/build.sh")
"$helm" lint --quiet "$work/$name" >&2
"$helm" package "$work/$name" --destination "$work/chart" >&2
cp "$work/chart"/*.tgz "$out/"

# ---- the SBOM of the image's npm tree ----------------------------------------
# Read from the archive itself, so it lists what the image holds: the /app of
# every layer, in order (the Dockerfile's `npm ci --omit=dev --omit=optional`
# tree). `npm sbom` reads the installed tree; devDependencies are dropped from
# the package.json beside it because npm counts a missing one as a problem
# even with --omit=dev. `npm sbom --package-lock-only --omit=optional` is not
# used: it also drops packages that an optional dependency shares with a
# required one (js-yaml, undici).
tree=$work/sbom/$name
rm -rf "$tree" && mkdir -p "$tree/layers"
for layer in $("$root/node_modules/.bin/node" -e '
  const fs = require("fs"), dir = process.argv[1];
  const index = JSON.parse(fs.readFileSync(`${dir}/index.json`, "utf8"));
  const blob = (d) => `${dir}/blobs/${d.replace(":", "/")}`;
  const manifest = JSON.parse(fs.readFileSync(blob(index.manifests[0].digest), "utf8"));
  for (const l of manifest.layers) console.log(blob(l.digest));' "$work/oci"); do
  # A layer without app/ makes GNU tar report "Not found in archive": only that is expected.
  if ! tar -xf "$layer" -C "$tree/layers" --wildcards 'app/*' 2>"$work/tar.err"; then
    if grep -v -e 'Not found in archive' -e 'Exiting with failure status due to previous errors' "$work/tar.err" >&2; then
      echo "release.sh: cannot read $layer" >&2
      exit 1
    fi
  fi
done
[ -d "$tree/layers/app/node_modules" ] || { echo "release.sh: the image has no /app/node_modules" >&2; exit 1; }
if find "$tree/layers/app" -name '.wh.*' | grep -q .; then
  echo "release.sh: whiteouts under /app in the image layers; the SBOM reader does not apply them" >&2
  exit 1
fi
mv "$tree/layers/app/node_modules" "$tree/node_modules"
"$root/node_modules/.bin/node" -e '
  const fs = require("fs");
  const pkg = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
  delete pkg.devDependencies;
  fs.writeFileSync(process.argv[2], JSON.stringify(pkg, null, 2) + "\n");' "$tree/layers/app/package.json" "$tree/package.json"
rm -rf "$tree/layers"
(cd "$tree" && npm sbom --sbom-format cyclonedx --sbom-type application) >"$out/$name-$version.cdx.json"

# ---- the changelog section ---------------------------------------------------
base=${RELEASE_BASE:-$(git -C "$root" describe --tags --abbrev=0 2>/dev/null || true)}
head=$(git -C "$root" rev-parse --short HEAD)
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then
  # The image's revision label and this section name HEAD; the files built differ from it.
  echo "release.sh: the work tree has uncommitted changes: the artifacts are not exactly $head" >&2
  head="$head with uncommitted changes"
fi
{
  echo "## $version ($(date -u +%Y-%m-%d))"
  echo
  if [ -n "$base" ]; then
    echo "Changes since $base, up to $head."
    range=$base..HEAD
  else
    echo "Changes since the first commit, $(git -C "$root" rev-list --max-parents=0 --abbrev-commit HEAD | tail -1), up to $head."
    range=HEAD
  fi
  echo
  echo "Image: \`docker.io/library/$name:$version\`, \`$digest\`."
  echo
  # The commits of the main line; a merge whose subject only names its branch
  # ("Merge branch 'x'") is followed by the branch's own commits.
  git -C "$root" log --first-parent --format='%H %h %P' "$range" | while read -r full short parents; do
    echo "- $(git -C "$root" log -1 --format=%s "$full") ($short)"
    set -- $parents
    if [ $# -ge 2 ] && git -C "$root" log -1 --format=%s "$full" | grep -Eq "^Merge branch '[^']*'( into [^ ]+)?$"; then
      git -C "$root" log --no-merges --format='  - %s (%h)' "$1..$2"
    fi
  done
} >"$out/CHANGELOG-$version.md"

# ---- checksums ---------------------------------------------------------------
(cd "$out" && sha256sum -- $(ls | grep -v '^SHA256SUMS$') >SHA256SUMS && sha256sum --quiet -c SHA256SUMS)
echo "$out"
