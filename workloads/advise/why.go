package advise

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tablebench/tablebench/engine"
	"github.com/tablebench/tablebench/results"
	"github.com/tablebench/tablebench/workloads"
)

// hottest finds where a run's load was heaviest against the service's
// limits, from what was measured: the hottest PartitionKey (the record's
// top keys) against the per-key target, and, where the service has range
// partitions served by one lane each (wa2010, modern), the range
// partition whose lane took the most, from the heat map's rows placed in
// the table's range partitions at the end of the run. Under cosmos a
// PartitionKey's RU/s count against its physical partition's share of
// the throughput.
func hottest(r *results.Run, p engine.Profile, s workloads.Spec) Hot {
	total := sent(r)
	secs := math.Max(r.MeasuredSec, 1)
	var key Hot
	if r.Partitions != nil && len(r.Partitions.Top) > 0 {
		k := r.Partitions.Top[0]
		key = Hot{Kind: "PartitionKey", Key: k.Key, Share: 100 * ratio(k.Requests, total), ThrottledPct: 100 * ratio(k.Throttled, k.Requests)}
		perReq := r.EntitiesSentPerSec / math.Max(r.RequestsPerSec, 1e-9)
		switch {
		case p.RequestUnits():
			parts := math.Max(1, math.Ceil(maxRU(p)/p.PartitionRU))
			ruPerReq := r.Totals.RequestUnits / math.Max(float64(r.Totals.Requests), 1)
			key.Load, key.Limit, key.Unit = float64(k.Requests)*ruPerReq/secs, maxRU(p)/parts, "RU/s"
		default:
			key.Load, key.Limit, key.Unit = float64(k.Requests)*perReq/secs, p.PartitionKeyRate, "entities/s"
		}
	}
	if p.RequestUnits() {
		if phys := hotPhysical(r, p, secs); phys.Use() > key.Use() && phys.Load > 1.2*key.Load {
			return phys
		}
		return key
	}
	rng := hotRange(r, p, s, total, secs)
	// A key that is most of its range's load is the finer reason.
	if rng.Use() > key.Use() && key.Share < 0.9*rng.Share {
		return rng
	}
	return key
}

// hotPhysical is the physical partition that the record's hottest keys
// load most, with its expected part of the keys the record does not list
// (a hash spreads them evenly over the partitions), their RU/s against
// the partition's share of the throughput: keys that hash to one
// partition share its budget.
func hotPhysical(r *results.Run, p engine.Profile, secs float64) Hot {
	if r.Partitions == nil || len(r.Partitions.Top) == 0 || r.Totals.Requests == 0 {
		return Hot{}
	}
	ruPerReq := r.Totals.RequestUnits / float64(r.Totals.Requests)
	var n int
	req, thr, keys := map[int]int64{}, map[int]int64{}, map[int]int{}
	var listed int64
	for _, k := range r.Partitions.Top {
		i, parts := engine.PhysicalPartition(p, k.Key)
		n = parts
		req[i] += k.Requests
		thr[i] += k.Throttled
		keys[i]++
		listed += k.Requests
	}
	best := -1
	for i := range req {
		if best < 0 || req[i] > req[best] || req[i] == req[best] && i < best {
			best = i
		}
	}
	total := sent(r)
	est := float64(req[best])
	which := fmt.Sprintf("%d of %d, holding %d keys", best+1, n, keys[best])
	if r.Partitions.UnlistedMax > 0 {
		est += float64(max(total-listed, 0)) / float64(n)
		which = fmt.Sprintf("%d of %d, holding %d of the hottest keys and about a %dth of the rest", best+1, n, keys[best], n)
	}
	return Hot{Kind: "physical partition", Key: which, Share: 100 * est / math.Max(float64(total), 1),
		Load: est * ruPerReq / secs, Limit: maxRU(p) / float64(n), Unit: "RU/s", ThrottledPct: 100 * ratio(thr[best], req[best])}
}

// sent is the measured requests that reached the service: those never
// sent, or never answered, carry no key.
func sent(r *results.Run) int64 {
	n := r.Totals.Requests
	for code, k := range r.Errors {
		if results.NoAnswer(code) {
			n -= k
		}
	}
	return n
}

func maxRU(p engine.Profile) float64 {
	if p.RUMax > 0 {
		return p.RUMax
	}
	return p.RU
}

// hotRange is the range partition whose lane took the most of the
// measured requests, and whether time-ordered keys moved the load along
// the key space (the newest or the oldest range).
func hotRange(r *results.Run, p engine.Profile, s workloads.Spec, total int64, secs float64) Hot {
	h, parts := r.Heatmap, r.RangePartitions
	if h == nil || len(parts) == 0 || len(h.Rows) == 0 {
		return Hot{}
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].Lo < parts[j].Lo })
	warm := int(s.Warmup / 1e9)
	end := warm + int(math.Round(r.MeasuredSec))
	measuredCol := func(col int) bool { at := h.StartSec + col*h.ColumnSec; return at >= warm && at < end }
	load := make([]int64, len(parts))
	thr := make([]int64, len(parts))
	colMax := map[int]struct {
		row int
		n   int64
	}{}
	for ri, row := range h.Rows {
		i := sort.Search(len(parts), func(i int) bool { return parts[i].Lo > row.Lo }) - 1
		i = max(i, 0)
		for _, c := range row.Cells {
			if !measuredCol(c.Column) {
				continue
			}
			load[i] += c.Requests
			thr[i] += c.Throttled
			if m := colMax[c.Column]; c.Requests > m.n {
				colMax[c.Column] = struct {
					row int
					n   int64
				}{ri, c.Requests}
			}
		}
	}
	best := 0
	for i := range load {
		if load[i] > load[best] {
			best = i
		}
	}
	pr := parts[best]
	hi := "end" // a range partition ends where the next begins
	if best+1 < len(parts) {
		hi = parts[best+1].Lo
	}
	out := Hot{Kind: "range partition", Key: fmt.Sprintf("[%s, %s) on server %d", short(pr.Lo), short(hi), pr.Server),
		Share: math.Min(100, 100*ratio(load[best], total)), Load: float64(load[best]) / secs, Limit: laneRate(p, s), Unit: "requests/s",
		ThrottledPct: 100 * ratio(thr[best], load[best])}
	// The hottest row of each column: climbing the key space as time
	// goes on is keys in time order, appended at its end.
	var cols []int
	for c := range colMax {
		cols = append(cols, c)
	}
	sort.Ints(cols)
	up, down := 0, 0
	for i := 1; i < len(cols); i++ {
		a, b := colMax[cols[i-1]].row, colMax[cols[i]].row
		switch {
		case b > a:
			up++
		case b < a:
			down++
		}
	}
	switch {
	case up >= 3 && up >= 4*down:
		out.Moving = "end"
	case down >= 3 && down >= 4*up:
		out.Moving = "start"
	}
	return out
}

// short shortens a key for a sentence.
func short(k string) string {
	if k == "" {
		return `""`
	}
	if len(k) > 14 {
		return strconv.Quote(k[:12] + "…")
	}
	return strconv.Quote(k)
}

// laneRate is the requests/s one range partition's lane serves of the
// workload's mix: one request at a time, each at its lane cost.
func laneRate(p engine.Profile, s workloads.Spec) float64 {
	mix := s.Mix
	if len(mix) == 0 {
		mix = []workloads.MixOp{{Op: s.Op, Weight: 1}}
	}
	var cost, weight float64
	for _, m := range mix {
		n := float64(s.EntitiesPerRequest(m.Op))
		var c time.Duration
		switch m.Op {
		case workloads.OpGet:
			c = p.Get
		case workloads.OpQuery, workloads.OpRange, workloads.OpScan:
			c = p.Get + time.Duration(n)*p.Scan
		case workloads.OpUpdate: // a read, then its write
			c = p.Get + p.WriteA + p.WriteB
		default:
			c = p.WriteA + time.Duration(n)*p.WriteB
		}
		cost += m.Weight * c.Seconds()
		weight += m.Weight
	}
	if cost <= 0 {
		return 0
	}
	return weight / cost
}

// givesUp says what a key design gives up, from its spec: the guides'
// costs of spreading load.
func givesUp(s workloads.Spec) string {
	switch s.Partition {
	case workloads.PartitionShared:
		return "nothing: every row shares one PartitionKey, so entity group transactions and queries span them all"
	case workloads.PartitionGUID:
		return "each thread writes its own random PartitionKey: a query across them fans out to every partition"
	case workloads.PartitionAppend, workloads.PartitionPrepend:
		return "each write its own PartitionKey: no entity group transactions across rows"
	}
	k := s.Keys
	var parts []string
	if k.Buckets > 1 {
		parts = append(parts, fmt.Sprintf("no entity group transactions across a key's %d buckets; a query of one key fans out to %d buckets", k.Buckets, k.Buckets))
	} else {
		parts = append(parts, "entity group transactions only within one key")
	}
	if k.Count > 1 {
		parts = append(parts, fmt.Sprintf("a query across keys fans out to up to %s partitions", Num(float64(k.Count*max(k.Buckets, 1)))))
	} else {
		parts = append(parts, "nothing across keys")
	}
	return strings.Join(parts, "; ")
}

// why says in one sentence why a candidate did as it did, in the terms of
// the partitioning guides, from what the run measured: where the load
// landed against which limit, what throttled, and whether it carried the
// target.
func why(row Row, p engine.Profile, s workloads.Spec) string {
	h := row.Hottest
	outcome := consequence(row)
	if row.ClientLimited != "" {
		return "The simulated client, not the design, limited this run, so its numbers describe the client: " + row.ClientLimited
	}
	r := row.run
	if !p.RequestUnits() && p.AccountRate > 0 && r != nil && r.EntitiesSentPerSec >= 0.9*p.AccountRate && row.ThrottledPct >= 1 && h.Use() < 0.8 {
		return fmt.Sprintf("The load, %s entities/s, is at the account's limit of %s entities/s, which caps any key design: %s.", Num(r.EntitiesSentPerSec), Num(p.AccountRate), outcome)
	}
	if p.RequestUnits() && r != nil && r.RequestUnitsPerSec >= 0.9*maxRU(p) && h.Use() < 0.8 {
		return fmt.Sprintf("The load, %s RU/s, is at the table's provisioned %s RU/s, which caps any key design: %s.", Num(r.RequestUnitsPerSec), Num(maxRU(p)), outcome)
	}
	distinct := int64(0)
	if r != nil && r.Partitions != nil {
		distinct = r.Partitions.Distinct
	}
	switch {
	case h.Kind == "range partition" && h.Use() >= 0.7 && h.Share >= 40:
		where := fmt.Sprintf("%.0f%% of requests land in one range partition %s", h.Share, h.Key)
		switch h.Moving {
		case "end":
			where = "Every write lands in the newest range partition, as keys in time order are appended at the end of the key space"
		case "start":
			where = "Every write lands in the first range partition, as keys in reverse time order are prepended at the start of the key space"
		}
		return fmt.Sprintf("%s: one server, whose lane serves about %s requests/s of this mix, was offered %s: %s.", upperFirst(where), Num(h.Limit), Num(h.Load), outcome)
	case h.Kind == "physical partition" && h.Use() >= 0.7:
		return fmt.Sprintf("The PartitionKeys that hash to one physical partition (%s) together take %s RU/s of its %s RU/s share of the throughput: %s.", h.Key, Num(h.Load), Num(h.Limit), outcome)
	case h.Kind == "PartitionKey" && h.Use() >= 0.7:
		what := "entities/s, the per-key target"
		if h.Unit == "RU/s" {
			what = "RU/s, its physical partition's share of the throughput"
		}
		return fmt.Sprintf("One PartitionKey takes %.0f%% of the requests: %s %s against %s %s: %s.", h.Share, Num(h.Load), h.Unit, Num(h.Limit), what, outcome)
	case row.Carries:
		room := "with room"
		if h.Use() >= 0.5 {
			room = "near its limit"
		}
		return fmt.Sprintf("The load spreads over %s PartitionKeys, the hottest %s at %.0f%% of its limit (%s of %s %s), %s: %s.", Num(float64(distinct)), h.Kind, 100*h.Use(), Num(h.Load), Num(h.Limit), h.Unit, room, outcome)
	}
	return fmt.Sprintf("The load spreads over %s PartitionKeys, the hottest %s at %.0f%% of its limit, yet %s.", Num(float64(distinct)), h.Kind, 100*h.Use(), outcome)
}

// consequence is what the design did with the load, as a clause.
func consequence(row Row) string {
	p99 := 0.0
	if row.run != nil {
		p99 = row.run.SuccessLatencyMs.P99
	}
	switch {
	case row.Carries:
		return fmt.Sprintf("it carries the target, %s of %s requests/s, p99 %s ms", Num(row.SuccessPerSec), Num(row.TargetRate), fmtMs(p99))
	case row.ThrottledPct >= 1 && row.NotSentPct >= 1:
		return fmt.Sprintf("%.1f%% of requests were throttled and %.0f%% waited so long that no client thread was free to send them, so only %s of %s requests/s succeeded", row.ThrottledPct, row.NotSentPct, Num(row.SuccessPerSec), Num(row.TargetRate))
	case row.ThrottledPct >= 1:
		return fmt.Sprintf("%.1f%% of requests were throttled, so only %s of %s requests/s succeeded", row.ThrottledPct, Num(row.SuccessPerSec), Num(row.TargetRate))
	case row.NotSentPct >= 1:
		return fmt.Sprintf("requests queued (p99 %s ms) until %.0f%% of them found no client thread free to send them, so only %s of %s requests/s succeeded", fmtMs(p99), row.NotSentPct, Num(row.SuccessPerSec), Num(row.TargetRate))
	}
	return fmt.Sprintf("only %s of %s requests/s succeeded", Num(row.SuccessPerSec), Num(row.TargetRate))
}

// Num formats a number with thousands separators, as the guides write
// them: 2,000.
func Num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	if math.Abs(v) < 10 && v != math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	s := strconv.FormatInt(int64(math.Round(math.Abs(v))), 10)
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func fmtMs(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// upperFirst capitalizes a sentence's first letter.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// lowerFirst lowers a sentence's first letter to continue another, unless
// the word is an acronym or a name (its second letter is upper case).
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	if next, _ := utf8.DecodeRuneInString(s[n:]); unicode.IsUpper(next) {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}
