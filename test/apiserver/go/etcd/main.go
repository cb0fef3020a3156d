// Command etcd is the etcd server used by the API-server tests, built from the
// pinned go.etcd.io/etcd/server/v3 module (see scripts/ensure-kube.sh).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
