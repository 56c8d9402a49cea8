// Package keyspace decides which item an operation touches and how that
// item's key is spelled: the request distributions of a workload (uniform,
// zipfian, hotspot, latest, sequential) and the key names it writes
// (random or sequential, optionally spread over synthetic-key buckets, or
// time-ordered). Workloads pick their PartitionKeys and rows with it; it
// sends nothing and depends on no other part of tablebench.
//
// # Distributions
//
// A Distribution is a law over the indexes 0..n-1 of n items; a Chooser,
// one per thread, draws from it. n may grow between draws as a run inserts
// items. The laws, as Distribution.Prob states them exactly:
//
//   - uniform: P(i) = 1/n.
//   - zipfian: P(rank r) = (r+1)^-θ / H(n,θ), where H(n,θ) = Σ_{k=1..n} k^-θ,
//     so the most popular item takes 1/H(n,θ) of the operations. Any
//     0 < θ <= MaxTheta; YCSB's default is 0.99. With Scramble, rank r
//     is item Scramble(r, n), a fixed permutation of 0..n-1 shared by
//     every thread and machine, so the popular items are spread over the
//     key range instead of sitting at its start; without it rank r is item r.
//   - hotspot: the first h = ceil(hot_data·n) items get hot_ops of the
//     operations and the others the rest, uniformly within each set:
//     P(i) = hot_ops/h for i < h, (1-hot_ops)/(n-h) otherwise (YCSB's
//     hotspot); when h = n there are no cold items and P(i) = 1/n.
//   - latest: zipfian over recency, the newest item (n-1) most popular:
//     P(i) = (n-i)^-θ / H(n,θ) (YCSB's latest).
//   - sequential: each Chooser walks 0, 1, 2, ... and wraps at n, so over
//     n draws every item is picked once: P(i) = 1/n over a full walk.
//
// Zipfian draws are exact, by rejection-inversion (Hörmann and Derflinger,
// "Rejection-inversion to generate variates from monotone discrete
// distributions", 1996), in O(1) time and space for any n: no table of n
// entries and no O(n) normalisation, unlike YCSB's generator, which
// approximates the law and needs θ < 1.
//
// # Names
//
// Names spell item i's key. On a range-partitioned service adjacent keys
// share a range partition, and its server, until the load balancer splits
// it, so spelling decides where the load lands: random names spread items
// over the key space like GUIDs; sequential names keep them adjacent in key
// order. Buckets are the synthetic-key fix for a hot key: one item's
// entities are spread over Buckets keys; a bucket prefix puts those keys far
// apart in key order (different range partitions), a bucket suffix keeps
// them adjacent. TimeKey spells the time-ordered keys of the append and
// prepend partition schemes.
package keyspace
