// Package casestudy is the published case study as data: Figures 3-15 with
// the runs that reproduce them, and the claims C3.1-C15.4 the report checks.
//
// A claim is declared, not coded: a measured Quantity (a run's stat, a
// figure's value, a growth, a share, the lowest over series), the Bound it
// must meet, and the Conditions that must also hold. The reading and the
// threshold the report prints are written from those same parts, so what
// the report says is what was checked.
//
// In the data flow it sits beside package workloads: the coordinator runs
// the figures' specs, package results stores the runs, and Check turns the
// stored runs into results.CheckedClaim values for the report.
package casestudy
