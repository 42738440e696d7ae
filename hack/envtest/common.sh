# Shared by build.sh and kubectl.sh (sourced, not run): the pinned versions,
# the cache dir and the build step.
#
#   MASAKARI_ASSETS   cache root (default ~/.cache/masakari-operator/envtest);
#                     the binaries go into <root>/k8s-<version>-etcd-<version>/
envtest_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# K8S_VERSION must match k8s.io/kubernetes in kube-apiserver/go.mod.
K8S_VERSION=1.34.4
ETCD_VERSION=3.6.16
cache=${MASAKARI_ASSETS:-${XDG_CACHE_HOME:-$HOME/.cache}/masakari-operator/envtest}
bin="$cache/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"

# What `kube-apiserver --version` and `kubectl version` report (release builds
# stamp both packages the same way).
k8s_minor=${K8S_VERSION#*.}
k8s_minor=${k8s_minor%%.*}
k8s_version_ldflags=""
for vpkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_version_ldflags+=" -X $vpkg.gitVersion=v$K8S_VERSION -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$k8s_minor"
done

# build NAME DIR PACKAGE LDFLAGS: builds PACKAGE (`.` for DIR's main.go, or a
# `tool` of DIR's go.mod) of the wrapper module in DIR into $bin/NAME, unless
# it is there already. Concurrent callers wait for one build (flock, when the
# system has it) instead of compiling the same thing twice.
build() {
  local name=$1 dir=$2 pkg=$3 ldflags=$4 lock=""
  if [ -x "$bin/$name" ]; then return 0; fi
  mkdir -p "$bin"
  if command -v flock >/dev/null; then
    exec {lock}>"$bin/.$name.lock"
    flock "$lock"
    # another process may have built it while we waited
    if [ -x "$bin/$name" ]; then exec {lock}>&-; return 0; fi
  fi
  command -v go >/dev/null || { echo "$(basename "$0"): go is required to build $name" >&2; exit 1; }
  echo "building $name into $bin (first time only; takes minutes)..." >&2
  local work; work=$(mktemp -d)
  cp "$envtest_dir/$dir/go.mod" "$envtest_dir/$dir/main.go" "$work/"
  [ -f "$envtest_dir/$dir/go.sum" ] && cp "$envtest_dir/$dir/go.sum" "$work/"
  ( cd "$work" && GOFLAGS=-mod=mod go mod tidy >&2 && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin/$name.tmp.$$" "$pkg" >&2 )
  # keep the resolved go.sum next to the sources so later builds are reproducible
  [ -f "$envtest_dir/$dir/go.sum" ] || cp "$work/go.sum" "$envtest_dir/$dir/go.sum" 2>/dev/null || true
  mv "$bin/$name.tmp.$$" "$bin/$name"
  rm -rf "$work"
  if [ -n "$lock" ]; then exec {lock}>&-; fi
}
