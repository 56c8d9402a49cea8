package results

import (
	"cmp"
	"container/heap"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Heatmap is where a run's requests landed in the PartitionKey space over
// time, as Bigtable's Key Visualizer draws it: rows are ranges of keys in
// key order, columns are spans of the run's seconds (warm-up included,
// each request in the second it completed, as in Intervals), and each cell
// counts requests, successes and throttled requests. On the engine the
// balancer's splits and moves are in Events and its range partitions at
// the end in RangePartitions; against a real endpoint the heat map is what
// the client saw.
//
// It is bounded whatever the number of keys and the length of the run:
//
//   - Rows: each key gets a row of its own until there are 2·HeatmapRows;
//     then the adjacent pair of rows with the fewest requests between them
//     becomes one row, again and again, until HeatmapRows remain. Hot keys
//     keep rows of their own while cold stretches of the key space share
//     one. A key that falls within a row's range counts in that row.
//   - Columns: a column spans a power of two of seconds, the least that
//     fits the run's warm-up and measured window in HeatmapColumns; should
//     requests complete later still, the width doubles and adjacent
//     columns add up.
//
// Shards' heat maps merge: rows whose ranges overlap become one, and a
// shard's column counts in the merged column where it starts.
type Heatmap struct {
	ColumnSec int `json:"column_sec"` // seconds a column spans
	// StartSec is the second of the run, from its start, where column 0
	// begins: 0, or on a merged run the earliest shard's start.
	StartSec int       `json:"start_sec"`
	Columns  int       `json:"columns"`
	Rows     []HeatRow `json:"rows"`
	// NoKey counts the requests that carried no PartitionKey: a scan
	// across partitions, or a request never sent.
	NoKey HeatCells `json:"no_key,omitempty"`
}

// HeatRow is a range of PartitionKeys, the first and the last key it
// counted in key order, and its requests over time.
type HeatRow struct {
	Lo    string    `json:"lo"`
	Hi    string    `json:"hi"`
	Cells HeatCells `json:"cells"`
}

// HeatCell is a row's requests in one column. Throttled are those
// answered 503 ServerBusy or 500 OperationTimedOut.
type HeatCell struct {
	Column                  int
	Requests, OK, Throttled int64
}

// HeatCells are a row's cells that counted a request, in column order.
// In JSON they are one string, "column:requests" for a cell whose
// requests all succeeded and "column:requests,ok,throttled" for another,
// separated by spaces: "0:120 1:131,97,34". A record holds thousands, and
// as arrays an indented record would give each number a line.
type HeatCells []HeatCell

// MarshalJSON writes the cells as one string.
func (cs HeatCells) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 12*len(cs))
	for i, c := range cs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(c.Column), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, c.Requests, 10)
		if c.OK != c.Requests || c.Throttled != 0 {
			b = append(b, ',')
			b = strconv.AppendInt(b, c.OK, 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, c.Throttled, 10)
		}
	}
	return json.Marshal(string(b))
}

// UnmarshalJSON reads the cells from their string.
func (cs *HeatCells) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("heat map cells are a string such as \"0:120 1:131,97,34\": %w", err)
	}
	out := HeatCells{}
	for f := range strings.FieldsSeq(s) {
		col, counts, ok := strings.Cut(f, ":")
		parts := strings.Split(counts, ",")
		if !ok || (len(parts) != 1 && len(parts) != 3) {
			return fmt.Errorf("heat map cell %q is not column:requests or column:requests,ok,throttled", f)
		}
		var c HeatCell
		var err error
		if c.Column, err = strconv.Atoi(col); err != nil {
			return fmt.Errorf("heat map cell %q: column: %w", f, err)
		}
		var v [3]int64
		for i, p := range parts {
			if v[i], err = strconv.ParseInt(p, 10, 64); err != nil {
				return fmt.Errorf("heat map cell %q: %w", f, err)
			}
		}
		c.Requests, c.OK, c.Throttled = v[0], v[1], v[2]
		if len(parts) == 1 {
			c.OK = c.Requests
		}
		out = append(out, c)
	}
	*cs = out
	return nil
}

// Bounds of a heat map.
const (
	HeatmapRows    = 128
	HeatmapColumns = 120
)

// outcomeClass is how a heat map cell counts a request.
type outcomeClass uint8

const (
	classFailed outcomeClass = iota
	classOK
	classThrottled
)

// heatCounts are one cell's counters.
type heatCounts struct{ req, ok, thr int64 }

func (c *heatCounts) add(o heatCounts) { c.req, c.ok, c.thr = c.req+o.req, c.ok+o.ok, c.thr+o.thr }

// heatRow is a row as the collector builds it: its cells by column.
type heatRow struct {
	lo, hi string
	cells  []heatCounts
	total  int64
}

func (r *heatRow) at(col int) *heatCounts {
	if col >= len(r.cells) {
		r.cells = slices.Grow(r.cells, col+1-len(r.cells))[:col+1]
	}
	return &r.cells[col]
}

// absorb adds the next row in key order to r.
func (r *heatRow) absorb(o *heatRow) {
	r.hi = max(r.hi, o.hi)
	for c, v := range o.cells {
		if v.req > 0 {
			r.at(c).add(v)
		}
	}
	r.total += o.total
}

// heatBuilder builds a run's heat map in the collector's goroutine.
type heatBuilder struct {
	width, cols int
	rows        []*heatRow // in key order, ranges apart
	noKey       heatRow    // requests without a PartitionKey
	free        []*heatRow // rows merged away, for new keys to reuse
	last        *heatRow   // the row of the last key, which the next request most often shares
	// gen counts the times rows were merged: a key's row found before
	// is still its row while no rows were merged since, for a new row
	// takes a key outside every other row's range.
	gen uint32
}

// newHeatBuilder starts a heat map of a run whose warm-up and measured
// window last span.
func newHeatBuilder(span time.Duration) *heatBuilder {
	secs := int(math.Ceil(span.Seconds()))
	w := 1
	for (secs+w-1)/w > HeatmapColumns {
		w *= 2
	}
	return &heatBuilder{width: w, gen: 1}
}

// column returns the column of a second of the run.
func (b *heatBuilder) column(sec int) int {
	for sec/b.width >= HeatmapColumns {
		b.double()
	}
	c := sec / b.width
	b.cols = max(b.cols, c+1)
	return c
}

// double doubles the columns' width.
func (b *heatBuilder) double() {
	for _, r := range b.rows {
		r.cells = halve(r.cells)
	}
	b.noKey.cells = halve(b.noKey.cells)
	b.width *= 2
	b.cols = (b.cols + 1) / 2
}

func halve(cs []heatCounts) []heatCounts {
	n := (len(cs) + 1) / 2
	for i := range n {
		c := cs[2*i]
		if 2*i+1 < len(cs) {
			c.add(cs[2*i+1])
		}
		cs[i] = c
	}
	clear(cs[n:])
	return cs[:n]
}

// add counts n requests to row r (b.noKey for those without a key) in
// column col.
func (b *heatBuilder) add(col int, r *heatRow, class outcomeClass, n int64) {
	c := r.at(col)
	c.req += n
	switch class {
	case classOK:
		c.ok += n
	case classThrottled:
		c.thr += n
	}
	r.total += n
}

// row returns the row that counts key, making one if none does.
func (b *heatBuilder) row(key string) *heatRow {
	// A row that holds key in its range is the one: rows are apart.
	if r := b.last; r != nil && (key == r.lo || (key > r.lo && key <= r.hi)) {
		return r
	}
	i, found := slices.BinarySearchFunc(b.rows, key, func(r *heatRow, k string) int { return strings.Compare(r.lo, k) })
	switch {
	case found:
		b.last = b.rows[i]
	case i > 0 && key <= b.rows[i-1].hi:
		b.last = b.rows[i-1]
	case len(b.rows) >= 2*HeatmapRows:
		b.rows = compactRows(b.rows, HeatmapRows, &b.free)
		b.last = nil
		b.gen++
		return b.row(key) // into a merged row, or a row of its own
	default:
		var r *heatRow
		if n := len(b.free); n > 0 {
			r, b.free = b.free[n-1], b.free[:n-1]
		} else {
			r = &heatRow{}
		}
		r.lo, r.hi = key, key
		b.rows = slices.Insert(b.rows, i, r)
		b.last = r
	}
	return b.last
}

// rowOf returns the row that counts a key, as row does, from what the
// collector keeps of the key: the row found for it last, while still its.
func (b *heatBuilder) rowOf(k *keyInfo) *heatRow {
	if k.row != nil && k.rowGen == b.gen {
		return k.row
	}
	r := b.row(k.key)
	k.row, k.rowGen = r, b.gen
	return r
}

// record returns the heat map as the run's record keeps it.
func (b *heatBuilder) record() *Heatmap {
	h := &Heatmap{ColumnSec: b.width, Columns: b.cols}
	h.fill(compactRows(b.rows, HeatmapRows, nil), &b.noKey)
	return h
}

// fill writes rows and the requests without a key into the heat map.
func (h *Heatmap) fill(rows []*heatRow, noKey *heatRow) {
	h.Rows = make([]HeatRow, 0, len(rows))
	for _, r := range rows {
		h.Rows = append(h.Rows, HeatRow{Lo: r.lo, Hi: r.hi, Cells: r.heatCells()})
	}
	if noKey.total > 0 {
		h.NoKey = noKey.heatCells()
	}
}

// heatCells are the row's cells that counted a request.
func (r *heatRow) heatCells() HeatCells {
	cs := HeatCells{}
	for c, v := range r.cells {
		if v.req > 0 {
			cs = append(cs, HeatCell{Column: c, Requests: v.req, OK: v.ok, Throttled: v.thr})
		}
	}
	return cs
}

// compactRows merges adjacent rows, the pair with the fewest requests
// between them first (the earlier pair on a tie), until n remain. Rows
// merged away go to free, if given, for reuse.
func compactRows(rows []*heatRow, n int, free *[]*heatRow) []*heatRow {
	if len(rows) <= n {
		return rows
	}
	next, prev, ver := make([]int, len(rows)), make([]int, len(rows)), make([]int, len(rows))
	alive := make([]bool, len(rows))
	var h pairHeap
	for i := range rows {
		next[i], prev[i], alive[i] = i+1, i-1, true
		if i+1 < len(rows) {
			h = append(h, rowPair{i: i, j: i + 1, w: rows[i].total + rows[i+1].total})
		}
	}
	heap.Init(&h)
	for live := len(rows); live > n; {
		p := heap.Pop(&h).(rowPair)
		if !alive[p.i] || !alive[p.j] || ver[p.i] != p.vi || ver[p.j] != p.vj {
			continue // one of them changed since: a stale pair
		}
		rows[p.i].absorb(rows[p.j])
		alive[p.j], live = false, live-1
		ver[p.i]++
		nj := next[p.j]
		next[p.i] = nj
		if nj < len(rows) {
			prev[nj] = p.i
			heap.Push(&h, rowPair{i: p.i, j: nj, w: rows[p.i].total + rows[nj].total, vi: ver[p.i], vj: ver[nj]})
		}
		if pi := prev[p.i]; pi >= 0 {
			heap.Push(&h, rowPair{i: pi, j: p.i, w: rows[pi].total + rows[p.i].total, vi: ver[pi], vj: ver[p.i]})
		}
	}
	out := rows[:0]
	for i, r := range rows {
		switch {
		case alive[i]:
			out = append(out, r)
		case free != nil:
			r.lo, r.hi, r.cells, r.total = "", "", r.cells[:0], 0
			clear(r.cells[:cap(r.cells)])
			*free = append(*free, r)
		}
	}
	clear(rows[len(out):])
	return out
}

// rowPair is two adjacent rows as they were (versions vi and vj) when
// they weighed w requests together.
type rowPair struct {
	i, j   int
	w      int64
	vi, vj int
}

type pairHeap []rowPair

func (h pairHeap) Len() int { return len(h) }
func (h pairHeap) Less(a, b int) bool {
	if h[a].w != h[b].w {
		return h[a].w < h[b].w
	}
	return h[a].i < h[b].i
}
func (h pairHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *pairHeap) Push(x any)   { *h = append(*h, x.(rowPair)) }
func (h *pairHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}

// mergeHeatmaps merges heat maps (shards') onto one clock, on which heat
// map i's second s is s+shifts[i], in at most maxRows rows and maxCols
// columns. A column counts in the merged column where it starts: totals
// are kept exactly, and time to a column.
func mergeHeatmaps(hs []*Heatmap, shifts []int, maxRows, maxCols int) *Heatmap {
	width, lo, hi := 1, math.MaxInt, math.MinInt
	for i, h := range hs {
		width = max(width, h.ColumnSec)
		lo = min(lo, h.StartSec+shifts[i])
		hi = max(hi, h.StartSec+shifts[i]+h.Columns*h.ColumnSec)
	}
	floorTo := func(s, w int) int { return int(math.Floor(float64(s)/float64(w))) * w }
	origin := floorTo(lo, width)
	for (hi-origin+width-1)/width > maxCols {
		width *= 2
		origin = floorTo(lo, width)
	}
	m := &Heatmap{ColumnSec: width, StartSec: origin}
	var rows []*heatRow
	var noKey heatRow
	for i, h := range hs {
		at := func(r *heatRow, cs HeatCells) {
			for _, c := range cs {
				col := (h.StartSec + shifts[i] + c.Column*h.ColumnSec - origin) / width
				m.Columns = max(m.Columns, col+1)
				r.at(col).add(heatCounts{c.Requests, c.OK, c.Throttled})
				r.total += c.Requests
			}
		}
		for _, hr := range h.Rows {
			r := &heatRow{lo: hr.Lo, hi: hr.Hi}
			at(r, hr.Cells)
			rows = append(rows, r)
		}
		at(&noKey, h.NoKey)
	}
	slices.SortStableFunc(rows, func(a, b *heatRow) int { return cmp.Compare(a.lo, b.lo) })
	var union []*heatRow
	for _, r := range rows {
		if n := len(union); n > 0 && r.lo <= union[n-1].hi {
			union[n-1].absorb(r) // ranges that overlap cannot be told apart
			continue
		}
		union = append(union, r)
	}
	m.fill(compactRows(union, maxRows, nil), &noKey)
	return m
}

// Coarsen returns the heat map in at most rows rows and cols columns,
// merged as the collector merges them (adjacent rows with the fewest
// requests between them; columns doubled in width), for a chart with
// fewer pixels than the record has cells. The heat map is unchanged.
func (h *Heatmap) Coarsen(rows, cols int) *Heatmap {
	return mergeHeatmaps([]*Heatmap{h}, []int{0}, max(rows, 1), max(cols, 1))
}
