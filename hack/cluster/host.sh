#!/usr/bin/env bash
# Prepares this machine to be the test cluster's node (tools/controlplane/
# cluster.ts runs it before starting anything), idempotently:
#   - containerd, runc, iptables, conntrack and the CNI plugins from Debian,
#     installed when missing (plus buildah, which builds the pause image);
#   - the pause (sandbox) image, built from node/pause/main.go into a
#     docker-archive under the cache, since registry.k8s.io cannot be pulled;
#   - the node IP, added to the loopback interface: a local-only address
#     (nothing routes to it from outside; the VM kernel has no dummy
#     interfaces) that pods can reach, unlike 127.0.0.1;
#   - the kernel settings kubelet and kube-proxy expect (ip_forward,
#     bridge-nf-call-iptables).
# Must run as root. Prints the pause image archive.
#
#   NODE_IP   default 10.213.0.1
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../image/common.sh"
source "$here/../envtest/common.sh"
NODE_IP=${NODE_IP:-10.213.0.1}
[ "$(id -u)" = 0 ] || { echo "host.sh: the test cluster needs root (kubelet, containerd, iptables)" >&2; exit 1; }

ensure_packages containerd runc iptables conntrack containernetworking-plugins buildah ethtool socat
[ -x /usr/lib/cni/bridge ] || { echo "host.sh: no CNI bridge plugin in /usr/lib/cni" >&2; exit 1; }

ip -4 addr show dev lo | grep -q "inet $NODE_IP/" || ip addr add "$NODE_IP/32" dev lo

sysctl -qw net.ipv4.ip_forward=1
# Without br_netfilter a pod's reply to another pod on the same bridge skips
# the Service DNAT's conntrack entry (kube-proxy's documented requirement).
[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] || modprobe br_netfilter 2>/dev/null || true
[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] && sysctl -qw net.bridge.bridge-nf-call-iptables=1

# The pause image: a static Go binary in an otherwise empty image.
pause_dir="$cache/pause"
pause_archive="$pause_dir/pause.tar"
mkdir -p "$pause_dir"
# .ci/run prepares the host in the background while the cluster suite may start: one at a time.
if command -v flock >/dev/null; then exec {lock}>"$pause_dir/.build.lock"; flock "$lock"; fi
if [ ! -s "$pause_archive" ] || [ "$here/node/pause/main.go" -nt "$pause_archive" ]; then
  ( cd "$here/node" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags "-s -w" -o "$pause_dir/pause" ./pause )
  ctr=$(buildah from --quiet scratch)
  buildah copy --quiet "$ctr" "$pause_dir/pause" /pause >/dev/null
  buildah config --entrypoint '["/pause"]' --user 65535:65535 "$ctr"
  buildah commit --quiet --rm "$ctr" "$PAUSE_IMAGE" >/dev/null
  rm -f "$pause_archive.tmp"
  buildah push --quiet "$PAUSE_IMAGE" "docker-archive:$pause_archive.tmp:$PAUSE_IMAGE"
  mv "$pause_archive.tmp" "$pause_archive"
fi
echo "$pause_archive"
