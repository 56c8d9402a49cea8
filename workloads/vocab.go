package workloads

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// OpKind is an operation a run issues. Records, sweep files and flags
// spell it as its name, such as "insert".
type OpKind string

// Operations a run can issue; opTable describes each.
const (
	OpInsert OpKind = "insert"
	OpGet    OpKind = "get"
	OpBatch  OpKind = "batch"
	OpUpsert OpKind = "upsert"
	OpQuery  OpKind = "query"
	OpUpdate OpKind = "update"
	OpDelete OpKind = "delete"
	OpRange  OpKind = "range"
	OpScan   OpKind = "scan"
)

// PartitionScheme is how a run's threads choose PartitionKeys.
type PartitionScheme string

// Partition schemes; partitionTable describes each.
const (
	PartitionGUID    PartitionScheme = "guid"
	PartitionShared  PartitionScheme = "shared"
	PartitionAppend  PartitionScheme = "append"
	PartitionPrepend PartitionScheme = "prepend"
	PartitionFixed   PartitionScheme = "fixed"
)

// DistributionName is how a workload picks among keys: which of its
// PartitionKeys an operation goes to, and which existing row it reads.
// The package workloads/keyspace draws them.
type DistributionName string

// Distributions; distributionTable describes each.
const (
	DistUniform    DistributionName = "uniform"
	DistZipfian    DistributionName = "zipfian"
	DistHotspot    DistributionName = "hotspot"
	DistLatest     DistributionName = "latest"
	DistSequential DistributionName = "sequential"
)

// NameStyle is how a fixed key space spells its keys.
type NameStyle string

// Name styles; nameTable describes each.
const (
	NamesRandom     NameStyle = "random"
	NamesSequential NameStyle = "sequential"
)

// BucketPlace is where a synthetic key puts its hash bucket.
type BucketPlace string

// Bucket places; bucketTable describes each.
const (
	BucketPrefix BucketPlace = "prefix"
	BucketSuffix BucketPlace = "suffix"
)

// OverloadMode is what open load does with a request that falls due while
// every thread is busy.
type OverloadMode string

// Overload modes; overloadTable describes each.
const (
	OverloadDrop  OverloadMode = "drop"
	OverloadQueue OverloadMode = "queue"
)

// LoadMode is when a run's threads send their requests.
type LoadMode string

// Load modes; loadTable describes each.
const (
	LoadClosed LoadMode = "closed"
	LoadOpen   LoadMode = "open"
)

// RetryPolicy is what a thread does after a failed request.
type RetryPolicy string

// Retry policies; retryTable describes each and holds its defaults.
const (
	RetryNone        RetryPolicy = "none"
	RetryFixed       RetryPolicy = "fixed"
	RetryExponential RetryPolicy = "exponential"
	RetrySDK         RetryPolicy = "sdk"
	RetryStorage2010 RetryPolicy = "storage2010"
)

// The tables below are the only lists of each vocabulary: validation
// errors, flag help, the sweep file's accepted values and the README's
// lists all come from (or are checked against) them, in this order.

type opRow struct {
	Term[OpKind]
	batched bool // one request carries BatchSize entities (at most)
	reads   bool // picks among entities that exist: loaded first (Preload), or written earlier in the run
	writes  int  // rows one request adds: 1, BatchSize (-1), or 0
}

var opTable = []opRow{
	{Term[OpKind]{OpInsert, "single-entity inserts"}, false, false, 1},
	{Term[OpKind]{OpGet, "point gets of entities that exist"}, false, true, 0},
	{Term[OpKind]{OpBatch, "entity group transactions of batch-size inserts"}, true, false, -1},
	{Term[OpKind]{OpUpsert, "single-entity insert-or-replace"}, false, false, 1},
	{Term[OpKind]{OpQuery, "pages of batch-size entities of one partition"}, true, true, 0},
	{Term[OpKind]{OpUpdate, "read-modify-write: a get, then a merge with If-Match, 412 counted as a conflict"}, false, true, 0},
	{Term[OpKind]{OpDelete, "deletes of the oldest entity that exists"}, false, true, 0},
	{Term[OpKind]{OpRange, "a RowKey range of 1 to batch-size entities within one partition"}, true, true, 0},
	{Term[OpKind]{OpScan, "a page of batch-size entities across partitions, from a PartitionKey on"}, true, true, 0},
}

var partitionTable = []Term[PartitionScheme]{
	{PartitionGUID, "each thread its own random GUID PartitionKey"},
	{PartitionShared, "one GUID PartitionKey for every thread of every VM"},
	{PartitionAppend, "time-ordered, increasing keys: the append-only hot spot"},
	{PartitionPrepend, "time-ordered, decreasing keys: the prepend hot spot"},
	{PartitionFixed, "a fixed set of count PartitionKeys shared by every thread, picked by a distribution"},
}

var distributionTable = []Term[DistributionName]{
	{DistUniform, "every key equally likely"},
	{DistZipfian, "key i of N with probability (1/i^theta)/H(N,theta): a few keys take most operations"},
	{DistHotspot, "a hot_data share of the keys takes a hot_ops share of the operations, uniform within each set"},
	{DistLatest, "zipfian over recency: the newest keys most likely"},
	{DistSequential, "each thread walks the keys in order, round and round"},
}

var nameTable = []Term[NameStyle]{
	{NamesRandom, "keys spread over the key space like GUIDs"},
	{NamesSequential, "keys adjacent in key order: p000001, p000002, ..."},
}

var bucketTable = []Term[BucketPlace]{
	{BucketPrefix, "the bucket leads the key: a key's buckets spread over the key space"},
	{BucketSuffix, "the bucket ends the key: a key's buckets stay adjacent"},
}

var overloadTable = []Term[OverloadMode]{
	{OverloadDrop, "a request due while every thread is busy is dropped and counted, never sent (k6's arrival-rate executors)"},
	{OverloadQueue, "it waits for a thread and its wait counts in its latency (wrk2)"},
}

var loadTable = []Term[LoadMode]{
	{LoadClosed, "each thread sends its next request when its last returns"},
	{LoadOpen, "requests start at a fixed total rate, latency counted from each one's intended start"},
}

type retryRow struct {
	Term[RetryPolicy]
	defaults Retry // Policy is filled in from the name
}

var retryTable = []retryRow{
	{Term[RetryPolicy]{RetryNone, "the published method: no retry, a 3 s pause after any error (a workload's misses and conflicts are answers, not errors)"},
		Retry{Pause: 3 * time.Second}},
	{Term[RetryPolicy]{RetryFixed, "retry throttling and timeouts 3 times after 1 s"},
		Retry{MaxRetries: 3, Delay: time.Second}},
	// The partitioning guide's: 30 s base, 3 s minimum, 90 s maximum.
	{Term[RetryPolicy]{RetryExponential, "the partitioning guide's exponential backoff with ±20% jitter"},
		Retry{MaxRetries: 3, Delay: 30 * time.Second, MinBackoff: 3 * time.Second, MaxBackoff: 90 * time.Second}},
	{Term[RetryPolicy]{RetrySDK, "the Azure SDK's default: 3 retries from 800 ms up to 60 s"},
		Retry{MaxRetries: 3, Delay: 800 * time.Millisecond, MaxBackoff: 60 * time.Second}},
	{Term[RetryPolicy]{RetryStorage2010, "the 2010 storage client's default: 3 retries after 3, 27 and 81 s, ±20%, at most 90 s"},
		Retry{MaxRetries: 3, Delay: 3 * time.Second, MaxBackoff: 90 * time.Second}},
}

// Term is one value of a vocabulary and what it means.
type Term[T ~string] struct {
	Name T
	Doc  string // one line, lower case, as help text gives it in parentheses
}

// Vocabulary is the closed set of values one of a spec's named fields
// takes, in the order help text lists them.
type Vocabulary[T ~string] struct {
	Noun  string // what errors call a value: "op", "retry policy"
	Terms []Term[T]
}

// Ops returns the operations a run can issue.
func Ops() Vocabulary[OpKind] {
	v := Vocabulary[OpKind]{Noun: "op"}
	for _, r := range opTable {
		v.Terms = append(v.Terms, r.Term)
	}
	return v
}

// PartitionSchemes returns the partition schemes.
func PartitionSchemes() Vocabulary[PartitionScheme] {
	return Vocabulary[PartitionScheme]{Noun: "partition scheme", Terms: slices.Clone(partitionTable)}
}

// LoadModes returns the load modes.
func LoadModes() Vocabulary[LoadMode] {
	return Vocabulary[LoadMode]{Noun: "load mode", Terms: slices.Clone(loadTable)}
}

// Distributions returns the key distributions.
func Distributions() Vocabulary[DistributionName] {
	return Vocabulary[DistributionName]{Noun: "distribution", Terms: slices.Clone(distributionTable)}
}

// NameStyles returns the styles of a fixed key space's names.
func NameStyles() Vocabulary[NameStyle] {
	return Vocabulary[NameStyle]{Noun: "names", Terms: slices.Clone(nameTable)}
}

// BucketPlaces returns where a synthetic key may put its bucket.
func BucketPlaces() Vocabulary[BucketPlace] {
	return Vocabulary[BucketPlace]{Noun: "bucket_at", Terms: slices.Clone(bucketTable)}
}

// OverloadModes returns what open load may do when its threads are busy.
func OverloadModes() Vocabulary[OverloadMode] {
	return Vocabulary[OverloadMode]{Noun: "overload mode", Terms: slices.Clone(overloadTable)}
}

// RetryPolicies returns the retry policies.
func RetryPolicies() Vocabulary[RetryPolicy] {
	v := Vocabulary[RetryPolicy]{Noun: "retry policy"}
	for _, r := range retryTable {
		v.Terms = append(v.Terms, r.Term)
	}
	return v
}

// Names returns the vocabulary's values.
func (v Vocabulary[T]) Names() []T {
	out := make([]T, len(v.Terms))
	for i, t := range v.Terms {
		out[i] = t.Name
	}
	return out
}

// Or lists the values as prose: "closed or open".
func (v Vocabulary[T]) Or() string {
	names := make([]string, len(v.Terms))
	for i, t := range v.Terms {
		names[i] = string(t.Name)
	}
	return orList(names)
}

// Help lists the values with what each means, for a flag's usage text.
func (v Vocabulary[T]) Help() string {
	items := make([]string, len(v.Terms))
	for i, t := range v.Terms {
		items[i] = fmt.Sprintf("%s (%s)", t.Name, t.Doc)
	}
	return orList(items)
}

// Check returns nil if name is one of the vocabulary's values, or an error
// that names the known ones.
func (v Vocabulary[T]) Check(name T) error {
	if slices.ContainsFunc(v.Terms, func(t Term[T]) bool { return t.Name == name }) {
		return nil
	}
	return fmt.Errorf("%s %q is not known: use %s", v.Noun, string(name), v.Or())
}

// orList joins items as "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// Batched reports whether one request of the operation carries BatchSize
// entities (a batch, or a query page) rather than one.
func (o OpKind) Batched() bool { return o.row().batched }

// ReadsPreloaded reports whether the operation picks among entities that
// exist, which a run loads, unmeasured, before it starts (Spec.Preload of
// them for each thread, or for each key of a fixed key space).
func (o OpKind) ReadsPreloaded() bool { return o.row().reads }

// Writes reports how many rows one request of the operation adds when it
// carries n entities.
func (o OpKind) Writes(n int) int {
	if w := o.row().writes; w >= 0 {
		return w
	}
	return n
}

// row returns the operation's row of opTable; an unknown one has no
// abilities.
func (o OpKind) row() opRow {
	if i := slices.IndexFunc(opTable, func(r opRow) bool { return r.Name == o }); i >= 0 {
		return opTable[i]
	}
	return opRow{}
}
