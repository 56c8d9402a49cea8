package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// ShardSource is what a merged run keeps of each shard: where it ran and
// how its clock and window sat.
type ShardSource struct {
	Index       int         `json:"index"`
	Env         Environment `json:"environment"`
	Start       time.Time   `json:"start"` // the shard's own clock at its start
	SkewMs      *float64    `json:"skew_ms,omitempty"`
	MeasuredSec float64     `json:"measured_sec"`
	Requests    int64       `json:"requests"`
}

// MergeRuns combines the records of the shards of one run into the run's
// record, losing nothing: histograms are added (never percentiles
// averaged), counters summed, per-second intervals aligned on the service's
// time, and throughput measured over the window all shards share. It
// refuses records of different runs, and names a shard missing or given
// twice.
func MergeRuns(shards []*Run) (*Run, error) {
	byIndex, err := orderShards(shards)
	if err != nil {
		return nil, err
	}
	first := shards[0]
	g := &merger{
		m: &Run{ID: first.ID, Figure: first.Figure, Series: first.Series, X: first.X, Spec: first.Spec, Setup: first.Setup, Env: first.Env,
			Start: first.Shard.Start},
		hists:    map[string]*hdr.Histogram{},
		lo:       math.Inf(-1),
		hi:       math.Inf(1),
		secs:     map[int]*mergedSecond{},
		vms:      make([][]float64, len(byIndex)),
		allHlogs: true,
	}
	for i, r := range byIndex {
		if err := g.add(i, r); err != nil {
			return nil, err
		}
	}
	g.m.HarnessLagMs = g.worstLag
	if err := g.keySpace(byIndex); err != nil {
		return nil, fmt.Errorf("run %s: %w", g.m.ID, err)
	}
	g.intervals()
	if err := g.throughput(); err != nil {
		return nil, err
	}
	if err := summarize(g.m, g.totals, g.hists, g.ops); err != nil {
		return nil, fmt.Errorf("run %s: %w", g.m.ID, err)
	}
	g.m.opRates()
	if err := g.m.setRetryAfter(g.retryAfter); err != nil {
		return nil, fmt.Errorf("run %s: %w", g.m.ID, err)
	}
	g.clientCPU()
	return g.m, nil
}

// orderShards checks that shards are the records of every shard of one
// run, each once, and returns them in shard order.
func orderShards(shards []*Run) ([]*Run, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("nothing to merge: give the records of every shard")
	}
	first := shards[0]
	if first.Shard == nil {
		return nil, fmt.Errorf("run %s is not a shard's record (it has no shard field): merge takes the records of one sharded run", first.ID)
	}
	n := first.Shard.Count
	byIndex := make([]*Run, n)
	for _, r := range shards {
		switch {
		case r.Shard == nil:
			return nil, fmt.Errorf("run %s is not a shard's record: merge takes the records of one sharded run", r.ID)
		case r.ID != first.ID:
			return nil, fmt.Errorf("records of different runs: %s and %s", first.ID, r.ID)
		case !sameJSON(r.Spec, first.Spec):
			return nil, fmt.Errorf("run %s: shard %d was run with another spec than shard %d", r.ID, r.Shard.Index, first.Shard.Index)
		case r.Shard.Count != n:
			return nil, fmt.Errorf("run %s: shard %d says the run has %d shards, shard %d says %d", r.ID, r.Shard.Index, r.Shard.Count, first.Shard.Index, n)
		case r.Shard.Index < 0 || r.Shard.Index >= n:
			return nil, fmt.Errorf("run %s: shard %d is out of range for %d shards", r.ID, r.Shard.Index, n)
		case byIndex[r.Shard.Index] != nil:
			return nil, fmt.Errorf("run %s: shard %d is given twice", r.ID, r.Shard.Index)
		case !r.Shard.Start.Equal(first.Shard.Start):
			return nil, fmt.Errorf("run %s: shard %d started at %s, shard %d at %s: they are not one run", r.ID, r.Shard.Index, r.Shard.Start.Format(time.RFC3339Nano), first.Shard.Index, first.Shard.Start.Format(time.RFC3339Nano))
		}
		if err := r.Check(); err != nil {
			return nil, fmt.Errorf("shard %d: %w", r.Shard.Index, err)
		}
		byIndex[r.Shard.Index] = r
	}
	var missing []string
	for i, r := range byIndex {
		if r == nil {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("run %s: shard(s) %s of %d missing: give every shard's record", first.ID, strings.Join(missing, ", "), n)
	}
	return byIndex, nil
}

// merger accumulates the shards' records into the merged one, m.
type merger struct {
	m        *Run
	hists    map[string]*hdr.Histogram
	lo, hi   float64 // the common measured window, in seconds from the agreed start
	secs     map[int]*mergedSecond
	vms      [][]float64 // each shard's client CPU per VM
	sent     float64     // entities sent per second, summed
	allHlogs bool        // every shard kept its per-second histograms
	worstLag *Percentiles
	totals   Counts
	ops      map[string]Counts // each operation's, when the shards record them
	// retryAfter is the shards' retry-after histograms added; nil if none
	// had one.
	retryAfter *hdr.Histogram
	shifts     []int // each shard's seconds on the agreed clock, less its own
}

// mergedSecond is one second of the merged run, on the agreed clock.
type mergedSecond struct {
	iv   Interval
	hist *hdr.Histogram
	hs   int // shards with a histogram for the second
}

// add merges shard i's record r.
func (g *merger) add(i int, r *Run) error {
	m := g.m
	g.totals.add(&r.Totals)
	if o := r.OpenLoad; o != nil {
		if m.OpenLoad == nil {
			m.OpenLoad = &OpenLoad{Overload: o.Overload}
		}
		m.OpenLoad.Due += o.Due
		m.OpenLoad.Dropped += o.Dropped
		m.OpenLoad.IntendedPerSec += o.IntendedPerSec // each shard's over its own window; they ran together
		m.OpenLoad.AchievedPerSec += o.AchievedPerSec
	}
	for op, s := range r.Ops {
		if g.ops == nil {
			g.ops = map[string]Counts{}
		}
		o := g.ops[op]
		o.add(&s.Counts)
		g.ops[op] = o
	}
	m.Interrupted = m.Interrupted || r.Interrupted
	m.Refused = m.Refused || r.Refused
	m.MaxStartLagMs = math.Max(m.MaxStartLagMs, r.MaxStartLagMs)
	if r.HarnessLagMs != nil && (g.worstLag == nil || r.HarnessLagMs.P99 > g.worstLag.P99) {
		g.worstLag = r.HarnessLagMs
	}
	for _, w := range r.Warnings {
		m.Warnings = append(m.Warnings, fmt.Sprintf("shard %d: %s", i, w))
	}
	for _, note := range r.Notes {
		m.Notes = append(m.Notes, fmt.Sprintf("shard %d: %s", i, note))
	}
	for _, ev := range r.Events {
		ev.Detail = fmt.Sprintf("shard %d: %s", i, ev.Detail)
		m.Events = append(m.Events, ev)
	}
	g.vms[i] = r.ClientCPUPct
	g.sent += r.EntitiesSentPerSec
	m.MergedFrom = append(m.MergedFrom, ShardSource{Index: i, Env: r.Env, Start: r.Start, SkewMs: r.Shard.SkewMs, MeasuredSec: r.MeasuredSec, Requests: r.Totals.Requests})
	for name := range r.Histograms {
		h, err := r.Histogram(name)
		if err != nil {
			return fmt.Errorf("run %s, shard %d: histogram %s: %w", r.ID, i, name, err)
		}
		if g.hists[name] == nil {
			g.hists[name] = NewHistogram()
		}
		g.hists[name].Merge(h)
	}
	if r.RetryAfter != "" {
		h, err := r.RetryAfterHistogram()
		if err != nil {
			return fmt.Errorf("run %s, shard %d: retry-after histogram: %w", r.ID, i, err)
		}
		if g.retryAfter == nil {
			g.retryAfter = NewHistogram()
		}
		g.retryAfter.Merge(h)
	}
	g.addSeconds(r)
	return nil
}

// addSeconds adds the shard's per-second intervals, shifted onto the
// service's clock, and narrows the window all shards measured.
func (g *merger) addSeconds(r *Run) {
	warmup := g.m.Setup.Warmup
	// The shard's start on the service's clock, against the agreed one.
	skew := time.Duration(0)
	if r.Shard.SkewMs != nil {
		skew = time.Duration(*r.Shard.SkewMs * float64(time.Millisecond))
	}
	offset := r.Start.Add(skew).Sub(g.m.Start).Seconds()
	g.lo = math.Max(g.lo, offset+warmup.Seconds())
	g.hi = math.Min(g.hi, offset+warmup.Seconds()+r.MeasuredSec)
	shift := int(math.Round(offset))
	g.shifts = append(g.shifts, shift)
	if len(r.IntervalHists) != len(r.Intervals) {
		g.allHlogs = false
	}
	for j, iv := range r.Intervals {
		k := iv.Second + shift
		s := g.secs[k]
		if s == nil {
			s = &mergedSecond{iv: Interval{Second: k, Warmup: true}, hist: NewHistogram()}
			g.secs[k] = s
		}
		s.iv.Warmup = s.iv.Warmup && iv.Warmup
		s.iv.Requests += iv.Requests
		s.iv.Entities += iv.Entities
		s.iv.Throttled += iv.Throttled
		s.iv.Errors += iv.Errors
		s.iv.NoAnswer += iv.NoAnswer
		s.iv.RequestUnits += iv.RequestUnits
		if j < len(r.IntervalHists) {
			s.hist.Merge(r.IntervalHists[j])
			s.hs++
		}
	}
}

// keySpace merges where the shards' requests landed: their hottest keys,
// distinct keys and heat maps (when every shard has them: older records
// do not), and the range partitions the first shard to report them saw.
func (g *merger) keySpace(shards []*Run) error {
	var parts []*Partitions
	var heats []*Heatmap
	for _, r := range shards {
		if r.Partitions != nil {
			parts = append(parts, r.Partitions)
		}
		if r.Heatmap != nil {
			heats = append(heats, r.Heatmap)
		}
		if g.m.RangePartitions == nil {
			g.m.RangePartitions = r.RangePartitions
		}
	}
	if len(parts) == len(shards) {
		p, err := mergePartitions(parts)
		if err != nil {
			return err
		}
		g.m.Partitions = p
	}
	if len(heats) == len(shards) {
		g.m.Heatmap = mergeHeatmaps(heats, g.shifts, HeatmapRows, HeatmapColumns)
	}
	return nil
}

// intervals writes the merged seconds, in order, with their percentiles
// and histograms when every shard kept its histograms.
func (g *merger) intervals() {
	m := g.m
	for _, k := range slices.Sorted(maps.Keys(g.secs)) {
		s := g.secs[k]
		if g.allHlogs && s.hs > 0 {
			p := PercentilesOf(s.hist)
			s.iv.P50Ms, s.iv.P99Ms = p.P50, p.P99
			s.hist.SetStartTimeMs(m.Start.Add(time.Duration(k) * time.Second).UnixMilli())
			s.hist.SetEndTimeMs(m.Start.Add(time.Duration(k+1) * time.Second).UnixMilli())
			m.IntervalHists = append(m.IntervalHists, s.hist)
		}
		m.Intervals = append(m.Intervals, s.iv)
	}
	if !g.allHlogs {
		m.IntervalHists = nil
	}
}

// throughput measures the merged run over the whole seconds every shard
// measured.
func (g *merger) throughput() error {
	m := g.m
	first0, last := int(math.Ceil(g.lo-1e-9)), int(math.Floor(g.hi+1e-9))
	if last-first0 < 1 {
		return fmt.Errorf("run %s: the shards' measured windows share less than a second (%.1f s to %.1f s from the start): were they started together?", m.ID, g.lo, g.hi)
	}
	var ents, reqs int64
	var ru float64
	for k := first0; k < last; k++ {
		if s := g.secs[k]; s != nil {
			ents += s.iv.Entities
			reqs += s.iv.Requests
			ru += s.iv.RequestUnits
		}
	}
	m.MeasuredSec = float64(last - first0)
	m.EntitiesPerSec = float64(ents) / m.MeasuredSec
	m.RequestsPerSec = float64(reqs) / m.MeasuredSec
	m.RequestUnitsPerSec = ru / m.MeasuredSec
	m.EntitiesSentPerSec = g.sent // each shard's over its own window; they ran together
	return nil
}

// clientCPU lists client CPU per VM, in the whole run's VM order: VM v ran
// in shard (v-1) mod n, as its ((v-1) div n)th VM.
func (g *merger) clientCPU() {
	n := len(g.vms)
	for v := 0; ; v++ {
		s, at := v%n, v/n
		if at >= len(g.vms[s]) {
			break
		}
		g.m.ClientCPUPct = append(g.m.ClientCPUPct, g.vms[s][at])
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y bytes.Buffer
	return json.Compact(&x, a) == nil && json.Compact(&y, b) == nil && x.String() == y.String()
}

// ReadHlog reads a run's per-second histograms from its interval log, as
// WriteHlog wrote them, and checks that the log is the run's: it refuses
// another run's (or another shard's) log.
func (r *Run) ReadHlog(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	header := readHlogHeader(data)
	lr := hdr.NewHistogramLogReader(bytes.NewReader(data))
	var hs []*hdr.Histogram
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		if h == nil {
			break
		}
		hs = append(hs, h)
	}
	if err := r.checkHlog(path, header, hs); err != nil {
		return err
	}
	r.IntervalHists = hs
	return nil
}

// The comment line that names a log's run, and when it started to the
// millisecond (the log's own start time is in whole seconds): "tablebench
// run ID[ shard K/N], started TIME: ...".
const (
	hlogComment = "tablebench run "
	hlogStarted = ", started "
	hlogTime    = "2006-01-02T15:04:05.000Z07:00"
)

// hlogHeader is what an interval log's comment lines say of its run.
type hlogHeader struct {
	run      string    // the run it names, if it names one
	started  time.Time // when it started, if the comment says
	start    float64   // its start time, in whole seconds since the epoch
	startSet bool
}

func readHlogHeader(data []byte) hlogHeader {
	var h hlogHeader
	for line := range bytes.Lines(data) {
		if len(line) == 0 || line[0] != '#' {
			break
		}
		text := strings.TrimSpace(string(line[1:]))
		if rest, ok := strings.CutPrefix(text, hlogComment); ok {
			h.run, _, _ = strings.Cut(rest, ": ")
			var at string
			if h.run, at, ok = strings.Cut(h.run, hlogStarted); ok {
				h.started, _ = time.Parse(hlogTime, at)
			}
		} else if rest, ok := strings.CutPrefix(text, "[StartTime: "); ok {
			num, _, _ := strings.Cut(rest, " ")
			if v, err := strconv.ParseFloat(num, 64); err == nil {
				h.start, h.startSet = v, true
			}
		}
	}
	return h
}
