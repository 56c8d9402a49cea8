package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tablebench/tablebench/engine"
)

// The Kubernetes objects the k8s command prints: only the fields it sets,
// in the order people read them.
type (
	k8sJob struct {
		APIVersion string     `yaml:"apiVersion"`
		Kind       string     `yaml:"kind"`
		Metadata   k8sMeta    `yaml:"metadata"`
		Spec       k8sJobSpec `yaml:"spec"`
	}
	k8sMeta struct {
		Name   string            `yaml:"name,omitempty"`
		Labels map[string]string `yaml:"labels,omitempty"`
	}
	k8sJobSpec struct {
		CompletionMode string      `yaml:"completionMode"`
		Completions    int         `yaml:"completions"`
		Parallelism    int         `yaml:"parallelism"`
		BackoffLimit   int         `yaml:"backoffLimit"`
		Template       k8sTemplate `yaml:"template"`
	}
	k8sTemplate struct {
		Metadata k8sMeta    `yaml:"metadata"`
		Spec     k8sPodSpec `yaml:"spec"`
	}
	k8sPodSpec struct {
		RestartPolicy             string              `yaml:"restartPolicy"`
		Affinity                  *k8sAffinity        `yaml:"affinity,omitempty"`
		TopologySpreadConstraints []k8sTopologySpread `yaml:"topologySpreadConstraints,omitempty"`
		Containers                []k8sContainer      `yaml:"containers"`
		Volumes                   []k8sVolume         `yaml:"volumes,omitempty"`
	}
	k8sAffinity struct {
		PodAntiAffinity k8sAntiAffinity `yaml:"podAntiAffinity"`
	}
	k8sAntiAffinity struct {
		Required []k8sAffinityTerm `yaml:"requiredDuringSchedulingIgnoredDuringExecution"`
	}
	k8sAffinityTerm struct {
		LabelSelector k8sSelector `yaml:"labelSelector"`
		TopologyKey   string      `yaml:"topologyKey"`
	}
	k8sSelector struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	}
	k8sTopologySpread struct {
		MaxSkew           int         `yaml:"maxSkew"`
		TopologyKey       string      `yaml:"topologyKey"`
		WhenUnsatisfiable string      `yaml:"whenUnsatisfiable"`
		LabelSelector     k8sSelector `yaml:"labelSelector"`
	}
	k8sResources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	}
	k8sContainer struct {
		Name         string       `yaml:"name"`
		Image        string       `yaml:"image"`
		Args         []string     `yaml:"args"`
		Env          []k8sEnv     `yaml:"env"`
		Resources    k8sResources `yaml:"resources"`
		VolumeMounts []k8sMount   `yaml:"volumeMounts,omitempty"`
	}
	k8sEnv struct {
		Name      string       `yaml:"name"`
		ValueFrom k8sValueFrom `yaml:"valueFrom"`
	}
	k8sValueFrom struct {
		SecretKeyRef *k8sKeyRef   `yaml:"secretKeyRef,omitempty"`
		FieldRef     *k8sFieldRef `yaml:"fieldRef,omitempty"`
	}
	k8sKeyRef struct {
		Name string `yaml:"name"`
		Key  string `yaml:"key"`
	}
	k8sFieldRef struct {
		FieldPath string `yaml:"fieldPath"`
	}
	k8sMount struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	}
	k8sVolume struct {
		Name                  string           `yaml:"name"`
		PersistentVolumeClaim *k8sClaimRef     `yaml:"persistentVolumeClaim,omitempty"`
		ConfigMap             *k8sConfigMapRef `yaml:"configMap,omitempty"`
	}
	k8sClaimRef struct {
		ClaimName string `yaml:"claimName"`
	}
	k8sConfigMapRef struct {
		Name string `yaml:"name"`
	}
	k8sConfigMap struct {
		APIVersion string            `yaml:"apiVersion"`
		Kind       string            `yaml:"kind"`
		Metadata   k8sMeta           `yaml:"metadata"`
		Data       map[string]string `yaml:"data"`
	}
)

var (
	k8sName   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	k8sCPU    = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?|[0-9]+m)$`)
	k8sMemory = regexp.MustCompile(`^[0-9]+(Ki|Mi|Gi|Ti|k|M|G|T)?$`)
)

// The ways the k8s command keeps a run's pods apart. Two shards on one node
// share its CPU, which is the client bottleneck the case study warns about.
const (
	spreadNode = "node" // at most one pod a node
	spreadZone = "zone" // one a node, and even across zones
	spreadNone = "none"
)

// k8sFlags are the k8s command's own flags; the run's follow --.
type k8sFlags struct {
	shards                                           int
	image, name, secret, volume, cpu, memory, spread string
	startIn                                          time.Duration
}

func newK8sFlags(e *env) (*flagSet, *k8sFlags) {
	fs := newFlagSet(e, "k8s", "--shards N [--image IMG] [--secret NAME] [--volume CLAIM] -- run|figures|sweep FLAGS...")
	k := &k8sFlags{}
	fs.IntVar(&k.shards, "shards", 0, "pods, one shard each")
	fs.StringVar(&k.image, "image", "tablebench:latest", "the image built from the Dockerfile, as your cluster pulls it")
	fs.StringVar(&k.name, "name", "", "the Job's name (default tablebench-<job id>)")
	fs.StringVar(&k.secret, "secret", "tablebench", "the Secret whose key connection-string holds the connection string")
	fs.StringVar(&k.volume, "volume", "", "a PersistentVolumeClaim to store each shard's records in (default: records go to each pod's log)")
	fs.DurationVar(&k.startIn, "start-in", 0, "start every shard's warm-up this long after now (default: the shards agree on a start through the table)")
	fs.StringVar(&k.cpu, "cpu", "", "CPU each pod requests and is limited to, in Kubernetes units such as 2 or 1500m (default: from the run's threads per pod)")
	fs.StringVar(&k.memory, "memory", "", "memory each pod requests and is limited to, such as 1Gi or 768Mi (default: from the run's threads per pod)")
	fs.StringVar(&k.spread, "spread", spreadNode, "how pods are kept apart: node (at most one pod a node; pods beyond the nodes wait), zone (one a node, and even across zones) or none")
	return fs, k
}

// k8sCmd prints a Kubernetes Indexed Job that runs the shards of one run
// (or suite) as its pods.
func k8sCmd(ctx context.Context, e *env, args []string) error {
	fs, k := newK8sFlags(e)
	if err := parseWords(fs, args); err != nil {
		return err
	}
	cmdArgs := fs.Args()
	if err := k.check(cmdArgs); err != nil {
		return err
	}
	files, podArgs, err := embedFiles(cmdArgs)
	if err != nil {
		return err
	}
	sizing, err := k.size(cmdArgs)
	if err != nil {
		return err
	}
	job, jobName, err := k.jobName(cmdArgs)
	if err != nil {
		return err
	}
	pod, collect, err := k.pod(podArgs, jobName)
	if err != nil {
		return err
	}
	labels := map[string]string{"app.kubernetes.io/name": "tablebench", "tablebench/job-id": strings.ToLower(job)}
	var docs []any // the manifest's documents, in the order they are applied
	if len(files) > 0 {
		// The files the run reads travel with the Job, in a ConfigMap each
		// pod mounts where the rewritten flags point.
		cm := k8sConfigMap{APIVersion: "v1", Kind: "ConfigMap", Metadata: k8sMeta{Name: jobName + "-files", Labels: labels}, Data: files}
		docs = append(docs, cm)
		pod.Volumes = append(pod.Volumes, k8sVolume{Name: "files", ConfigMap: &k8sConfigMapRef{Name: cm.Metadata.Name}})
		pod.Containers[0].VolumeMounts = append(pod.Containers[0].VolumeMounts, k8sMount{Name: "files", MountPath: k8sFilesDir})
	}
	placement := k.place(&pod, job)
	docs = append(docs, k8sJob{APIVersion: "batch/v1", Kind: "Job", Metadata: k8sMeta{Name: jobName, Labels: labels},
		Spec: k8sJobSpec{CompletionMode: "Indexed", Completions: k.shards, Parallelism: k.shards, BackoffLimit: 0,
			Template: k8sTemplate{Metadata: k8sMeta{Labels: labels}, Spec: pod}}})
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b) // one document after another, "---" between
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stdout, `# tablebench: %d shards of "tablebench %s" as a Kubernetes Indexed Job.
# Each pod runs shard $JOB_COMPLETION_INDEX of %d; the shards meet in the
# run's table before they start, so every pod starts its warm-up together.
# Each pod: %s CPU and %s of memory, %s (--cpu, --memory);
# %s (--spread).
#   kubectl create secret generic %s --from-literal=connection-string='...'
#   kubectl apply -f job.yaml && kubectl wait --for=condition=complete job/%s --timeout=2h
# Records: %s
`, k.shards, cmdArgs[0], k.shards, k.cpu, k.memory, sizing, placement, k.secret, jobName, collect)
	_, err = e.stdout.Write(b.Bytes())
	return err
}

// k8sFilesDir is where a pod finds the files its run reads.
const k8sFilesDir = "/etc/tablebench"

// embedFiles reads the files the run's flags name (a workload file, a
// profile file, a sweep file) and returns them by the name each pod reads
// them under, with the flags rewritten to point there: a pod cannot read
// this machine's files. A preset or built-in name is left as it is.
func embedFiles(cmdArgs []string) (files map[string]string, out []string, err error) {
	out = slices.Clone(cmdArgs)
	for i := 1; i < len(out); i++ {
		name, value, inline := strings.Cut(strings.TrimLeft(out[i], "-"), "=")
		if out[i] == name || !slices.Contains([]string{"workload", "profile", "file"}, name) {
			continue
		}
		at := i
		if !inline {
			if i+1 >= len(out) {
				continue
			}
			at, value = i+1, out[i+1]
		}
		if value == "-" {
			return nil, nil, usagef("--%s -: a pod has no standard input to read; give the file's path", name)
		}
		if name == "profile" && !engine.IsProfileFile(value) {
			continue // a built-in profile
		}
		data, rerr := os.ReadFile(value)
		if rerr != nil {
			if name == "workload" && errors.Is(rerr, fs.ErrNotExist) && !strings.ContainsAny(value, "/.") {
				continue // a preset
			}
			return nil, nil, usagef("--%s: %v", name, rerr)
		}
		if files == nil {
			files = map[string]string{}
		}
		key := name + filepath.Ext(value)
		files[key] = string(data)
		path := k8sFilesDir + "/" + key
		if inline {
			out[i] = "--" + name + "=" + path
		} else {
			out[at] = path
		}
	}
	return files, out, nil
}

// check refuses flags, and run flags after --, a manifest cannot be made
// from.
func (k *k8sFlags) check(cmdArgs []string) error {
	if k.shards < 2 {
		return usagef("--shards %d: give the number of pods, 2 or more", k.shards)
	}
	if len(cmdArgs) == 0 || !slices.Contains([]string{"run", "figures", "sweep"}, cmdArgs[0]) {
		return usagef("after --, give the run to shard: -- run FLAGS, -- figures FLAGS or -- sweep FLAGS")
	}
	for _, a := range cmdArgs[1:] {
		for _, own := range []string{"--shard", "-shard", "--shards", "-shards", "--out", "-out", "--json", "-json", "--start-at", "-start-at"} {
			if a == own || strings.HasPrefix(a, own+"=") {
				return usagef("%s is set by the manifest for each pod: leave it out of the run's flags", own)
			}
		}
	}
	if k.cpu != "" && !k8sCPU.MatchString(k.cpu) {
		return usagef("--cpu %q is not a CPU quantity: give cores such as 2 or 0.5, or millicores such as 1500m", k.cpu)
	}
	if k.memory != "" && !k8sMemory.MatchString(k.memory) {
		return usagef("--memory %q is not a memory quantity: give bytes with a unit such as 1Gi or 768Mi", k.memory)
	}
	if !slices.Contains([]string{spreadNode, spreadZone, spreadNone}, k.spread) {
		return usagef("--spread %q is not known: use node, zone or none", k.spread)
	}
	return nil
}

// size sets --cpu and --memory, where they are not given, from the load
// of a pod, and says how they were chosen.
func (k *k8sFlags) size(cmdArgs []string) (sizing string, err error) {
	load, err := shardLoad(cmdArgs, k.shards)
	if err != nil {
		return "", err
	}
	milliCPU, memMiB := load.resources()
	sizing = fmt.Sprintf("sized for %s, %s", load.from, map[bool]string{false: "single requests", true: "batches"}[load.batches])
	if k.cpu == "" {
		k.cpu = fmt.Sprintf("%dm", milliCPU)
		if milliCPU%1000 == 0 {
			k.cpu = fmt.Sprint(milliCPU / 1000)
		}
	} else {
		sizing += "; --cpu given"
	}
	if k.memory == "" {
		k.memory = fmt.Sprintf("%dMi", memMiB)
	} else {
		sizing += "; --memory given"
	}
	return sizing, nil
}

// jobName returns the run's job ID, which every pod must share, and the
// Job's name.
func (k *k8sFlags) jobName(cmdArgs []string) (job, name string, err error) {
	for i, a := range cmdArgs {
		if v, ok := strings.CutPrefix(a, "--job-id="); ok {
			job = v
		} else if (a == "--job-id" || a == "-job-id") && i+1 < len(cmdArgs) {
			job = cmdArgs[i+1]
		}
	}
	if job == "" {
		return "", "", usagef("the run needs --job-id, the same for every pod: add it after --")
	}
	name = k.name
	if name == "" {
		name = "tablebench-" + strings.ToLower(job)
	}
	if !k8sName.MatchString(name) || len(name) > 63 {
		return "", "", usagef("the Job name %q is not a valid Kubernetes name: use lower-case letters, digits and dashes (--name)", name)
	}
	return job, name, nil
}

// pod returns the pod each shard runs in, and how its records are
// collected: from the pods' logs, or from the volume.
func (k *k8sFlags) pod(cmdArgs []string, jobName string) (pod k8sPodSpec, collect string, err error) {
	podArgs := append(slices.Clone(cmdArgs), "--shards", fmt.Sprint(k.shards), "--target", "table", "--yes", "--quiet")
	if k.startIn > 0 {
		podArgs = append(podArgs, "--start-at", time.Now().Add(k.startIn).UTC().Format(time.RFC3339))
	}
	// Limits equal to requests make each pod Guaranteed: the scheduler
	// reserves the CPU the run was sized for, and no neighbour takes it.
	res := map[string]string{"cpu": k.cpu, "memory": k.memory}
	c := k8sContainer{Name: "tablebench", Image: k.image, Resources: k8sResources{Requests: res, Limits: res}, Env: []k8sEnv{
		{Name: "TABLEBENCH_CONNECTION_STRING", ValueFrom: k8sValueFrom{SecretKeyRef: &k8sKeyRef{Name: k.secret, Key: "connection-string"}}},
		{Name: "JOB_COMPLETION_INDEX", ValueFrom: k8sValueFrom{FieldRef: &k8sFieldRef{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
	}}
	pod = k8sPodSpec{RestartPolicy: "Never"}
	collect = fmt.Sprintf("kubectl logs -l job-name=%s --tail=-1 --max-log-requests=%d > shards.jsonl && tablebench merge shards.jsonl", jobName, k.shards)
	switch {
	case k.volume != "":
		podArgs = append(podArgs, "--out", "/results/shard-$(JOB_COMPLETION_INDEX)")
		c.VolumeMounts = []k8sMount{{Name: "results", MountPath: "/results"}}
		pod.Volumes = []k8sVolume{{Name: "results", PersistentVolumeClaim: &k8sClaimRef{ClaimName: k.volume}}}
		collect = "copy /results from the claim " + k.volume + ", then: tablebench merge --out merged /results/shard-*"
	case cmdArgs[0] == "run":
		podArgs = append(podArgs, "--json")
	default:
		return pod, "", usagef("a sharded %s writes a directory per shard: give --volume CLAIM to keep them", cmdArgs[0])
	}
	c.Args = podArgs
	pod.Containers = []k8sContainer{c}
	return pod, collect, nil
}

// place keeps the job's pods apart as --spread says, and says how.
func (k *k8sFlags) place(pod *k8sPodSpec, job string) (placement string) {
	own := k8sSelector{MatchLabels: map[string]string{"tablebench/job-id": strings.ToLower(job)}}
	placement = "pods may share a node (--spread none)"
	if k.spread != spreadNone {
		pod.Affinity = &k8sAffinity{PodAntiAffinity: k8sAntiAffinity{Required: []k8sAffinityTerm{{LabelSelector: own, TopologyKey: "kubernetes.io/hostname"}}}}
		placement = "at most one pod a node: pods beyond the nodes wait for one"
	}
	if k.spread == spreadZone {
		pod.TopologySpreadConstraints = []k8sTopologySpread{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: "DoNotSchedule", LabelSelector: own}}
		placement += ", spread evenly across zones"
	}
	return placement
}
