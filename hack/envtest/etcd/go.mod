module openkeel.io/masakari-operator/hack/envtest/etcd

go 1.24.0

require go.etcd.io/etcd/server/v3 v3.6.16
