package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	batchv1 "k8s.io/api/batch/v1"
)

// TestK8sManifestIsAJob: the manifest decodes into the Kubernetes API's
// batch/v1 Job with no field it does not know, and runs N indexed shards
// of the run with the connection string from a Secret.
func TestK8sManifestIsAJob(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string // in the pod's args
	}{
		{[]string{"k8s", "--shards", "4", "--", "run", "--op", "batch", "--vms", "16", "--threads", "30", "--job-id", "fig13"}, []string{"--shards", "4", "--json", "--target", "table"}},
		{[]string{"k8s", "--shards", "3", "--volume", "results", "--start-in", "10m", "--", "figures", "--quick", "--job-id", "q1"}, []string{"--out", "/results/shard-$(JOB_COMPLETION_INDEX)", "--start-at"}},
	} {
		code, out, errOut := tb(t, context.Background(), nil, c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		var doc any
		if err := yaml.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.DisallowUnknownFields()
		var job batchv1.Job
		if err := dec.Decode(&job); err != nil {
			t.Fatalf("the manifest is not a batch/v1 Job: %v\n%s", err, out)
		}
		s := job.Spec
		if job.Kind != "Job" || s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism {
			t.Fatalf("not an Indexed Job of N pods: %+v", s)
		}
		ct := s.Template.Spec.Containers[0]
		args := strings.Join(ct.Args, " ")
		for _, w := range c.want {
			if !strings.Contains(args, w) {
				t.Errorf("pod args %q lack %q", args, w)
			}
		}
		var secret bool
		for _, ev := range ct.Env {
			if ev.Name == "TABLEBENCH_CONNECTION_STRING" && ev.ValueFrom != nil && ev.ValueFrom.SecretKeyRef != nil {
				secret = true
			}
		}
		if !secret || strings.Contains(out, "AccountKey") {
			t.Error("the connection string must come from a Secret, never the manifest")
		}
	}
	for args, want := range map[string]string{
		"k8s --shards 1 -- run --job-id a":                 "--shards 1",
		"k8s --shards 2 -- run":                            "needs --job-id",
		"k8s --shards 2 -- run --job-id a --shard 0/2":     "--shard is set by the manifest",
		"k8s --shards 2 -- figures --job-id a":             "give --volume",
		"k8s --shards 2 -- serve":                          "give the run to shard",
		"k8s --shards 2 --name Bad_Name -- run --job-id a": "not a valid Kubernetes name",
	} {
		code, _, errOut := tb(t, context.Background(), nil, strings.Fields(args)...)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, %q; want %q", args, code, errOut, want)
		}
	}
}
