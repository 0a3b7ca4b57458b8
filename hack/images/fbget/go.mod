module fleetbench.dev/hack/images/fbget

go 1.24
