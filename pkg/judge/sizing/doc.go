// Package sizing is the pure arithmetic behind a capacity answer a planner can sign: the spread of
// repeated runs (median with a range and its coverage), the Universal Scalability Law fitted to a
// load sweep, a power law across profile sizes that predicts a size not run, and Little's law
// and price arithmetic for "which machine for N devices". It has no client calls and no API
// types: callers convert.
package sizing
