// Package ctrlkit holds the small helpers every fleetbench controller shares: the summary
// conditions (Ready, Reconciling, Stalled, Complete) as pure setters, deadline decisions,
// create-or-get of deterministically named children, TTL arithmetic and the one status patch.
// It knows no kind: a controller passes it what it decided.
package ctrlkit
