// Package gitops tests the GitOps health checks shipped in config/gitops: it runs the Argo CD
// Lua health scripts with gopher-lua, the interpreter Argo CD embeds, set up as Argo CD sets it
// up for checks from argocd-cm, on TestRun and CapacityPlan fixtures under testdata, and checks
// that the argocd-cm patch carries the Lua files verbatim. It has no code of its own.
package gitops
