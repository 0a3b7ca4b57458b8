// Package controllers holds one reconciler per fleetbench kind (TestRun, CapacityPlan).
// Reconcilers only read and write the cluster; what objects to build and how to merge
// results lives in client-free packages under pkg/, so it is tested with plain tables.
package controllers
