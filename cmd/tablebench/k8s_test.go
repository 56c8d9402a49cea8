package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// decodeJob reads the k8s command's manifest as the Kubernetes API's
// batch/v1 Job, refusing any field the API does not know.
func decodeJob(t *testing.T, out string) batchv1.Job {
	t.Helper()
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
	return job
}

// TestK8sPodsAreSizedAndSpread: every pod requests the CPU and memory its
// share of the run's threads needs, with limits equal to requests (so the
// pod is Guaranteed and no neighbour takes its CPU), and pods of one run
// are kept on separate nodes unless told otherwise: two shards on one node
// would share its CPU, the client bottleneck the case study warns about.
func TestK8sPodsAreSizedAndSpread(t *testing.T) {
	for _, c := range []struct {
		name               string
		args               string
		cpu, memory        string
		antiAffinity, zone bool
	}{
		// 16 VMs x 30 threads over 4 shards: 120 batch threads a pod, a core per 25.
		{"batches", "k8s --shards 4 -- run --op batch --vms 16 --threads 30 --job-id big", "5", "768Mi", true, false},
		// The same threads sending single inserts need a fifth of the CPU.
		{"singles", "k8s --shards 4 -- run --op insert --vms 16 --threads 30 --job-id big", "1500m", "320Mi", true, false},
		// A sweep is sized for its largest point: 8 VMs x 30 threads over 2 shards.
		{"sweep", "k8s --shards 2 --volume v -- sweep --op batch --vms 1,2,8 --threads 10,30 --job-id s", "5", "768Mi", true, false},
		// The catalog's largest run, Figure 13's 16 small VMs x 30 threads of batches.
		{"figures", "k8s --shards 8 --volume v -- figures --job-id f", "2500m", "512Mi", true, false},
		{"given", "k8s --shards 2 --cpu 3 --memory 2Gi --spread zone -- run --job-id a", "3", "2Gi", true, true},
		{"none", "k8s --shards 2 --spread none -- run --job-id a", "500m", "320Mi", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := tb(t, context.Background(), nil, strings.Fields(c.args)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			pod := decodeJob(t, out).Spec.Template.Spec
			res := pod.Containers[0].Resources
			for name, want := range map[corev1.ResourceName]string{corev1.ResourceCPU: c.cpu, corev1.ResourceMemory: c.memory} {
				req, lim := res.Requests[name], res.Limits[name]
				if req.String() != want || lim.Cmp(req) != 0 {
					t.Errorf("%s: request %s, limit %s; want both %s", name, req.String(), lim.String(), want)
				}
			}
			anti := pod.Affinity != nil && pod.Affinity.PodAntiAffinity != nil &&
				len(pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) == 1 &&
				pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey == "kubernetes.io/hostname"
			if anti != c.antiAffinity {
				t.Errorf("one pod a node: %v, want %v", anti, c.antiAffinity)
			}
			if anti {
				sel := pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector
				tmpl := decodeJob(t, out).Spec.Template.Labels
				for k, v := range sel.MatchLabels {
					if tmpl[k] != v {
						t.Errorf("the anti-affinity selects %s=%s, which the pods do not carry (%v)", k, v, tmpl)
					}
				}
			}
			zone := len(pod.TopologySpreadConstraints) == 1 && pod.TopologySpreadConstraints[0].TopologyKey == "topology.kubernetes.io/zone" && pod.TopologySpreadConstraints[0].MaxSkew == 1
			if zone != c.zone {
				t.Errorf("spread across zones: %v, want %v", zone, c.zone)
			}
		})
	}
}

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
		job := decodeJob(t, out)
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
		"k8s --shards 2 --cpu lots -- run --job-id a":      "--cpu \"lots\" is not a CPU quantity",
		"k8s --shards 2 --memory 1GB -- run --job-id a":    "--memory \"1GB\" is not a memory quantity",
		"k8s --shards 2 --spread rack -- run --job-id a":   "--spread \"rack\" is not known",
		"k8s --shards 2 -- run --job-id a --threads x":     "--threads \"x\": give whole numbers",
	} {
		code, _, errOut := tb(t, context.Background(), nil, strings.Fields(args)...)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, %q; want %q", args, code, errOut, want)
		}
	}
}

// TestK8sCarriesTheRunsFiles: a workload file, a profile file or a sweep
// file the run names travels with the Job, in a ConfigMap every pod mounts
// where its rewritten flags point, since a pod cannot read this machine's
// files; the pods are sized from the workload's own VMs and threads; a
// preset or a built-in profile is left as it is; standard input, which no
// pod has, is refused.
func TestK8sCarriesTheRunsFiles(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "orders.yaml")
	os.WriteFile(wl, []byte("mix: {get: 1}\npartitions: {count: 10}\nvms: 4\nthreads: 100\n"), 0o644)
	pf := filepath.Join(dir, "mine.yaml")
	os.WriteFile(pf, []byte("base: modern\nname: mine\npartition_rate: 1500\n"), 0o644)
	code, out, errOut := tb(t, context.Background(), nil, "k8s", "--shards", "2", "--", "run", "--workload", wl, "--profile="+pf, "--job-id", "orders")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	docs := strings.SplitN(out, "\n---\n", 2)
	if len(docs) != 2 {
		t.Fatalf("want a ConfigMap, then the Job:\n%s", out)
	}
	var doc any
	if err := yaml.Unmarshal([]byte(docs[0]), &doc); err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(doc)
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var cm corev1.ConfigMap
	if err := dec.Decode(&cm); err != nil || cm.Kind != "ConfigMap" || cm.APIVersion != "v1" {
		t.Fatalf("the first document is not a v1 ConfigMap (%v):\n%s", err, docs[0])
	}
	if !strings.Contains(cm.Data["workload.yaml"], "threads: 100") || !strings.Contains(cm.Data["profile.yaml"], "partition_rate: 1500") {
		t.Fatalf("the ConfigMap holds %v", cm.Data)
	}
	job := decodeJob(t, docs[1])
	pod := job.Spec.Template.Spec
	args := strings.Join(pod.Containers[0].Args, " ")
	if !strings.Contains(args, "--workload /etc/tablebench/workload.yaml") || !strings.Contains(args, "--profile=/etc/tablebench/profile.yaml") || strings.Contains(args, dir) {
		t.Fatalf("pod args %q: the flags must name the mounted files", args)
	}
	var mounted bool
	for _, v := range pod.Volumes {
		mounted = mounted || v.ConfigMap != nil && v.ConfigMap.Name == cm.Name
	}
	if !mounted || len(pod.Containers[0].VolumeMounts) == 0 || pod.Containers[0].VolumeMounts[0].MountPath != "/etc/tablebench" {
		t.Fatalf("the ConfigMap is not mounted: volumes %+v, mounts %+v", pod.Volumes, pod.Containers[0].VolumeMounts)
	}
	if !strings.Contains(out, "200 threads a pod (4 VMs of 100 threads over 2 shards)") {
		t.Errorf("the pods are not sized from the workload:\n%s", strings.SplitN(out, "\n", 5)[3])
	}
	// A preset and a built-in profile stay as they are.
	code, out, _ = tb(t, context.Background(), nil, "k8s", "--shards", "2", "--", "run", "--workload", "ycsb-a", "--profile", "modern", "--job-id", "y")
	if code != 0 || strings.Contains(out, "ConfigMap") || !strings.Contains(out, "- ycsb-a") {
		t.Errorf("a preset: exit %d\n%s", code, out)
	}
	code, _, errOut = tb(t, context.Background(), nil, "k8s", "--shards", "2", "--", "run", "--workload", "-", "--job-id", "y")
	if code != 2 || !strings.Contains(errOut, "a pod has no standard input") {
		t.Errorf("--workload -: exit %d, %q", code, errOut)
	}
}
