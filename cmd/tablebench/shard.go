package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tablebench/tablebench/workloads"
)

// shardFlags make a process one shard of a run or suite.
type shardFlags struct {
	shard      string
	shards     int
	startAt    string
	rendezvous time.Duration
}

func (s *shardFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.shard, "shard", "", "run shard K of N (K from 0): VMs K+1, K+1+N, ... of the spec; every shard needs the same flags and --job-id")
	fs.IntVar(&s.shards, "shards", 0, "with $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job), the number of shards; the index is K")
	fs.StringVar(&s.startAt, "start-at", "", "RFC 3339 time at which every shard starts its warm-up (default: the shards agree through the table)")
	fs.DurationVar(&s.rendezvous, "rendezvous-timeout", workloads.DefaultRendezvous, "how long a shard waits for the others")
}

// resolve returns the shard, the shard count (0: not sharded) and the start.
func (s *shardFlags) resolve(getenv func(string) string) (k, n int, start time.Time, err error) {
	switch {
	case s.shard != "":
		ks, ns, ok := strings.Cut(s.shard, "/")
		var err1, err2 error
		k, err1 = strconv.Atoi(ks)
		n, err2 = strconv.Atoi(ns)
		if !ok || err1 != nil || err2 != nil || n < 1 || k < 0 || k >= n {
			return 0, 0, start, usagef("--shard %q: use K/N with 0 <= K < N, such as 0/4", s.shard)
		}
		if s.shards != 0 && s.shards != n {
			return 0, 0, start, usagef("--shard %s and --shards %d disagree", s.shard, s.shards)
		}
	case s.shards != 0:
		idx := getenv("JOB_COMPLETION_INDEX")
		if idx == "" {
			return 0, 0, start, usagef("--shards %d needs $JOB_COMPLETION_INDEX (set by a Kubernetes Indexed Job), or give --shard K/N", s.shards)
		}
		k, err = strconv.Atoi(idx)
		if err != nil || k < 0 || k >= s.shards || s.shards < 1 {
			return 0, 0, start, usagef("$JOB_COMPLETION_INDEX %q is not a shard of --shards %d", idx, s.shards)
		}
		n = s.shards
	}
	if s.rendezvous <= 0 {
		return 0, 0, start, usagef("--rendezvous-timeout %v: use a positive duration such as 5m", s.rendezvous)
	}
	if s.startAt != "" {
		if n == 0 {
			return 0, 0, start, usagef("--start-at is for sharded runs: give --shard K/N too")
		}
		if start, err = time.Parse(time.RFC3339, s.startAt); err != nil {
			return 0, 0, start, usagef("--start-at %q is not an RFC 3339 time such as 2026-11-22T20:00:00Z", s.startAt)
		}
	}
	return k, n, start, nil
}

// apply makes spec shard k of n.
func (s *shardFlags) apply(spec *workloads.Spec, k, n int, start time.Time) {
	if n < 2 {
		return
	}
	spec.Shard, spec.Shards, spec.StartAt, spec.Rendezvous = k, n, start, s.rendezvous
}

// describeShard says which shard this is, for the configuration lines.
func describeShard(spec workloads.Spec) string {
	if spec.Shards < 2 {
		return ""
	}
	var vms []string
	for v := spec.Shard + 1; v <= spec.VMs; v += spec.Shards {
		vms = append(vms, strconv.Itoa(v))
	}
	return fmt.Sprintf("shard %d of %d (VMs %s of %d), job %s", spec.Shard, spec.Shards, strings.Join(vms, ", "), spec.VMs, spec.JobID)
}
