// Package workloads is tablebench's harness: a run's spec (operation,
// partition scheme, VMs and threads, entity size, retry policy, load mode),
// the keys and entities it generates, the coordinator that fans out
// threads that mimic VMs and threads against a Target (a goroutine each
// against an endpoint; on the engine in virtual time, state machines that
// the clock steps on one goroutine), and figures as
// data: suites of runs, and how their results become points to draw. The
// case study's own figures and claims are in package casestudy.
//
// By default a run follows the case study's method exactly: closed-loop
// synchronous threads, no retries and a 3 s pause after any error, GUID
// PartitionKeys, RowKeys of the form JobID_VMID_WorkerID_Index, one random
// Payload string per 1,024-byte entity, measurement after a warm-up.
//
// In the data flow (spec -> coordinator -> target -> recorder -> results ->
// charts) it is the spec and the coordinator; a Target (the engine in
// process, or any endpoint through the SDK) answers, and package results
// records.
package workloads
