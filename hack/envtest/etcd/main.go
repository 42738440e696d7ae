// Command etcd is a thin wrapper around etcd's own main, built from Go
// modules for the local test control plane.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
