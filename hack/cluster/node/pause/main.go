// Command pause is the pod sandbox ("infra") container of the test cluster,
// built here because registry.k8s.io/pause cannot be pulled: like the upstream
// pause (kubernetes/build/pause/linux/pause.c) it holds the pod's namespaces,
// sleeps until SIGINT or SIGTERM, and, as PID 1 of a pod that shares its PID
// namespace, reaps orphaned children.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
