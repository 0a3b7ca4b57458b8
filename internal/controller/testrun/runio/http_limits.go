package runio

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Every HTTP client of the manager refuses redirects: a runner's answer is written by the
// tenant, and a redirect would aim the manager's own request, method and body included, at any
// address it can reach (another tenant's runner, through the API server's proxy with the
// manager's rights). A 3xx comes back as it is and is an error.
func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// NoRedirectClientset is a clientset whose HTTP client follows no redirect: the pods/proxy
// answers and the logs it reads pass the API server on from a pod or a node.
func NoRedirectClientset(cfg *rest.Config) (*kubernetes.Clientset, *http.Client, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	hc.CheckRedirect = refuseRedirect
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	return cs, hc, err
}

// Bounds of what one answer may take in memory. A larger answer is an error, never a
// truncated parse.
const (
	// maxSmallAnswer: k6's status, its errors, the answers to stop, resume and release.
	maxSmallAnswer = 64 << 10
	// maxSetupAnswer: setup()'s data (maxSetupData) in k6's JSON:API wrapping.
	maxSetupAnswer = MaxSetupData + 64<<10
	// maxStatsAnswer: a node's kubelet summary or a namespace's pod metrics.
	maxStatsAnswer = 16 << 20
)

var errTooLarge = errors.New("answer too large")

// readAtMost reads all of r, or fails once it holds more than limit bytes.
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", errTooLarge, limit)
	}
	return b, nil
}
