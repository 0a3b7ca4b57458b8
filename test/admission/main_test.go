// Package admission proves, against a real kube-apiserver and etcd, that fleetbench's CRDs
// accept every shipped example and refuse bad objects with messages that name the field.
package admission

import (
	"fmt"
	"os"
	"testing"

	"fleetbench.dev/fleetbench/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	var err error
	env, err = testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	os.Exit(code)
}
