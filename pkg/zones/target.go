package zones

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Target is how a zone's runners reach the home run's target: the URL its zone run names as
// external, and the TARGET_<NAME>_* variables of each provisioned component.
type Target struct {
	URL string
	Env []corev1.EnvVar
}

// runnerSchemes are the schemes an external target's URL may have (the CRD's rule).
var runnerSchemes = map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "grpc": true, "tcp": true}

// Exposed is a provisioned target as other clusters reach it: each component's
// TARGET_<NAME>_URL, _HOST and _PORT (env, as the home runners get them, at
// <service>.<namespace>.svc) moved to host, the address of a home node, and the NodePort of
// the component's Service. The URL is the first component's whose scheme a runner's external
// target may have, else tcp:// to the first. A Service without a NodePort yet is an error.
func Exposed(env []corev1.EnvVar, services []corev1.Service, host string) (Target, error) {
	nodePort := map[string]int32{} // "<service>.<namespace>.svc:<port>" -> its NodePort
	for i := range services {
		svc := &services[i]
		for _, p := range svc.Spec.Ports {
			if p.NodePort == 0 {
				return Target{}, fmt.Errorf("service %s has no NodePort yet", svc.Name)
			}
			nodePort[fmt.Sprintf("%s.%s.svc:%d", svc.Name, svc.Namespace, p.Port)] = p.NodePort
		}
	}
	hosts := map[string]string{} // component key -> its in-cluster host
	for _, e := range env {
		if key, ok := strings.CutSuffix(e.Name, "_HOST"); ok {
			hosts[key] = e.Value
		}
	}
	var out Target
	var first string
	for _, e := range env {
		key, suffix := splitVar(e.Name)
		np, ok := nodePort[hosts[key]+":"+portOf(env, key)]
		if !ok {
			return Target{}, fmt.Errorf("%s: no Service exposes %s:%s", e.Name, hosts[key], portOf(env, key))
		}
		value := e.Value
		switch suffix {
		case "_HOST":
			value = host
		case "_PORT":
			value = strconv.Itoa(int(np))
		case "_URL":
			u, err := url.Parse(e.Value)
			if err != nil {
				return Target{}, fmt.Errorf("%s: %w", e.Name, err)
			}
			u.Host = net.JoinHostPort(host, strconv.Itoa(int(np)))
			value = u.String()
			if first == "" {
				first = "tcp://" + u.Host
			}
			if out.URL == "" && runnerSchemes[u.Scheme] {
				out.URL = value
			}
		}
		out.Env = append(out.Env, corev1.EnvVar{Name: e.Name, Value: value})
	}
	if out.URL == "" {
		out.URL = first
	}
	if out.URL == "" {
		return Target{}, fmt.Errorf("the target has no component with a URL")
	}
	return out, nil
}

func splitVar(name string) (key, suffix string) {
	for _, s := range []string{"_URL", "_HOST", "_PORT"} {
		if k, ok := strings.CutSuffix(name, s); ok {
			return k, s
		}
	}
	return name, ""
}

func portOf(env []corev1.EnvVar, key string) string {
	for _, e := range env {
		if e.Name == key+"_PORT" {
			return e.Value
		}
	}
	return ""
}
