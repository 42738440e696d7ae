// kstatus prints the kstatus result (sigs.k8s.io/cli-utils/pkg/kstatus/status,
// the library behind Flux's health checks, `kubectl wait` in cli-utils and
// kpt) of every object in the JSON it reads on stdin: one object, or a List
// such as `kubectl get -o json` prints. One JSON line per object:
//
//	{"kind":"Notification","name":"n1","status":"Failed","message":"..."}
//
// Built by hack/kstatus/build.sh; the packaging and gitops tests run it on
// objects read back from the API server.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

type line struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

func main() {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	// apimachinery's decoder keeps integers int64, as kstatus's field accessors expect
	var obj map[string]interface{}
	if err := utiljson.Unmarshal(data, &obj); err != nil {
		fail(fmt.Errorf("stdin is not a JSON object: %w", err))
	}
	items := []interface{}{obj}
	if list, ok := obj["items"].([]interface{}); ok {
		items = list
	}
	out := json.NewEncoder(os.Stdout)
	for _, item := range items {
		m, ok := item.(map[string]interface{})
		if !ok {
			fail(fmt.Errorf("list item is not an object"))
		}
		u := &unstructured.Unstructured{Object: m}
		res, err := status.Compute(u)
		if err != nil {
			fail(fmt.Errorf("%s/%s: %w", u.GetKind(), u.GetName(), err))
		}
		if err := out.Encode(line{Kind: u.GetKind(), Name: u.GetName(), Status: res.Status.String(), Message: res.Message}); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kstatus:", err)
	os.Exit(1)
}
