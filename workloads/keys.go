package workloads

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"unsafe"

	"github.com/google/uuid"
	"github.com/tablebench/tablebench/clock"
	"github.com/tablebench/tablebench/tables"
	"github.com/tablebench/tablebench/workloads/keyspace"
)

// minEntitySize is the smallest entity a run can write: the keys and an empty
// Payload property.
const minEntitySize = 256

// guidFrom returns a random (version 4) GUID drawn from rng, so that runs are
// reproducible for a seed.
func guidFrom(rng *rand.Rand) string {
	var u uuid.UUID
	for i := 0; i < 16; i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			u[i+j] = byte(v >> (8 * j))
		}
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u.String()
}

// keys generates one thread's keys.
type keys struct {
	// What every request of a thread with a PartitionKey of its own, or
	// the shared one, reads comes first, in one cache line.
	fixedPK bool   // every request's PartitionKey is pk
	pk      string // guid and shared
	index   int
	// spelled holds the next RowKeys, each rkLen bytes long, yet to be
	// handed out: index is the first of them.
	spelled string
	rkLen   int
	scheme  PartitionScheme
	prefix  string // JobID_VMID_WorkerID_
	rowBuf  []byte
	// spread, with more than one bucket, spreads every key over its
	// buckets, taken in turn: the synthetic-key fix for a shared or
	// time-ordered key.
	spread keyspace.Names
	bucket int
	suffix string          // makes time-ordered keys of different threads distinct
	ends   []int           // rowKeys: where each key ends in rowBuf
	loaded []tables.Entity // what the thread loaded for its reads, in RowKey order
	low    int             // the oldest of its rows that exists: deletes take them in order
}

func newKeys(spec *Spec, sharedPK string, vmID, worker int, rng *rand.Rand) *keys {
	k := &keys{scheme: spec.Partition, prefix: fmt.Sprintf("%s_%d_%d_", spec.JobID, vmID, worker), suffix: fmt.Sprintf("-%d-%d", vmID, worker)}
	if b := spec.Keys.Buckets; b > 1 && spec.Partition != PartitionFixed {
		// Threads start at different buckets, so that they do not move
		// through them in step.
		k.spread = keyspace.Names{Buckets: b, BucketAt: string(spec.Keys.BucketAt)}
		k.bucket = (vmID*1009 + worker) % b
	}
	switch spec.Partition {
	case PartitionShared:
		k.pk = sharedPK
	default:
		k.pk = guidFrom(rng)
	}
	k.fixedPK = !k.timeOrdered() && k.spread.Buckets <= 1
	return k
}

// partitionKey returns the PartitionKey of the next request sent at model
// time nanos.
func (k *keys) partitionKey(nanos int64) string {
	pk := k.pk
	switch k.scheme {
	case PartitionAppend:
		pk = fmt.Sprintf("%019d%s", nanos, k.suffix)
	case PartitionPrepend:
		pk = fmt.Sprintf("%019d%s", math.MaxInt64-nanos, k.suffix)
	}
	if k.spread.Buckets > 1 {
		pk = k.spread.Spread(pk, k.bucket)
		k.bucket = (k.bucket + 1) % k.spread.Buckets
	}
	return pk
}

// partitionKeyNow returns the PartitionKey of the next request, sent now
// on c, which it reads only for keys that follow the clock. A thread's own
// or the shared key, in one bucket, is returned without a call.
func (k *keys) partitionKeyNow(c clock.Clock) string {
	if k.fixedPK {
		return k.pk
	}
	return k.partitionKeyAt(c)
}

// partitionKeyAt is partitionKeyNow, for keys that change.
func (k *keys) partitionKeyAt(c clock.Clock) string {
	var nanos int64
	if k.timeOrdered() {
		nanos = c.Now().UnixNano()
	}
	return k.partitionKey(nanos)
}

// rowKey returns the next RowKey, JobID_VMID_WorkerID_Index, the index zero
// padded so that RowKey order is insertion order. It is cut from a string
// of the next keys, spelled together (see spell): a request then costs no
// allocation, and no conversion of its index to digits.
func (k *keys) rowKey() string {
	if k.spelled == "" {
		k.spell()
	}
	rk := k.spelled[:k.rkLen]
	k.spelled = k.spelled[k.rkLen:]
	k.index++
	return rk
}

// spelledBytes is about how many bytes of RowKeys a thread spells at once:
// a size class of its own, which holds 15 keys of the usual 17 bytes and
// costs a run of 15,000 threads some 4 MB. Spelling a key costs about 70
// instructions, its share of the allocation among them (twice as many
// bytes saved 19 more, for twice the memory). A kept RowKey keeps its
// string's other keys, which a thread's loaded rows (time-ordered keys)
// are.
const spelledBytes = 256

// spell spells the next RowKeys, from index on, into one string: as many
// as fit in spelledBytes, all of one length. Keys whose indexes differ
// only in their last two digits are spelled as one: the first in full,
// copied into the others' places in as many copies as doubling takes,
// and then each key's last two digits.
func (k *keys) spell() {
	i := k.index
	l, n := len(k.prefix)+10, 1 // ten digits, zero padded
	if i < 1e10 {
		n = max(1, min(spelledBytes/l, 1e10-i)) // up to the last of ten digits
	} else { // longer, one at a time
		l += len(strconv.Itoa(i)) - 10
	}
	b := make([]byte, n*l)
	for at := 0; at < len(b); {
		// Keys from i to the next multiple of 100, at most, share all
		// but their last two digits, of which i's are 00 to 99.
		span := min((len(b)-at)/l, 100-i%100)
		end := at + span*l
		appendIndex(append(b[at:at], k.prefix...), int64(i))
		seg := b[at:end]
		for done := l; done < len(seg); done *= 2 {
			copy(seg[done:], seg[:done])
		}
		for p, d := at+l, i%100; p <= end; p, d = p+l, d+1 {
			*(*[2]byte)(b[p-2 : p]) = digitPairs[d]
		}
		at, i = end, i+span
	}
	// b is never written again: the string is its bytes, with no copy.
	k.spelled, k.rkLen = unsafe.String(unsafe.SliceData(b), len(b)), l
}

// digitPairs spells 00 to 99, two digits each.
var digitPairs = func() (t [100][2]byte) {
	for i := range t {
		t[i] = [2]byte{'0' + byte(i/10), '0' + byte(i%10)}
	}
	return t
}()

// rowKeys appends the next n RowKeys to dst. They are cut from one string:
// a batch's keys cost one allocation, and stored together they take less
// memory than a hundred small strings.
func (k *keys) rowKeys(dst []string, n int) []string {
	k.spelled = "" // spelled from an index these move past
	k.rowBuf = k.rowBuf[:0]
	k.ends = k.ends[:0]
	for range n {
		k.rowBuf = k.appendRowKey(k.rowBuf)
		k.ends = append(k.ends, len(k.rowBuf))
	}
	all, start := string(k.rowBuf), 0
	for _, end := range k.ends {
		dst = append(dst, all[start:end])
		start = end
	}
	return dst
}

// appendRowKey appends the next RowKey to b.
func (k *keys) appendRowKey(b []byte) []byte {
	b = appendIndex(append(b, k.prefix...), int64(k.index))
	k.index++
	return b
}

// timeOrdered reports whether the scheme's PartitionKeys follow the clock,
// so that a row's key is known only if the thread kept it.
func (k *keys) timeOrdered() bool {
	return k.scheme == PartitionAppend || k.scheme == PartitionPrepend
}

// readable is where the thread's rows that a read may pick end: every row
// it wrote to its own or the shared partition, or, where keys follow the
// clock, the rows it loaded and kept.
func (k *keys) readable() int {
	if k.timeOrdered() {
		return len(k.loaded)
	}
	return k.index
}

// row returns the thread's row number i, and where the range of span rows
// from it ends when that is known.
func (k *keys) row(i, span int, ok bool) row {
	if k.timeOrdered() {
		if i >= len(k.loaded) { // none left to read: a key no row has
			return row{pk: k.partitionKey(0), rk: k.rowKeyAt(k.index), ok: false}
		}
		e := &k.loaded[i]
		return row{pk: e.PartitionKey, rk: e.RowKey, ok: ok}
	}
	return row{pk: k.pk, rk: k.rowKeyAt(i), next: k.rowKeyAt(i + span), ok: ok}
}

// rowKeyAt returns the thread's RowKey number i.
func (k *keys) rowKeyAt(i int) string {
	return string(appendIndex(append(make([]byte, 0, len(k.prefix)+10), k.prefix...), int64(i)))
}

// payloads holds a thread's random payloads, made once so that the
// harness costs little per request.
type payloads struct {
	props [][]tables.Property // one entity's Payload properties each, shared: writers copy them
	i     int
}

const payloadAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// payloadCopies is how many different payloads a thread cycles through.
const payloadCopies = 8

// payloadShape returns the names of the Payload properties of an entity of
// size bytes with keys of the given lengths, and how many random
// characters they hold between them: the entity weighs size bytes by the
// service's formula, 4 + 2·(len(PK) + len(RK)) and, for each property,
// 8 + 2·len(name) + 2·len(value) + 4 (one byte less where that is odd).
// The characters go into one Payload string while a string property holds
// them (32K characters, some 64 KiB of entity), and into Payload,
// Payload2, Payload3, ... of nearly equal lengths beyond that, as a writer
// of larger entities must.
func payloadShape(size, pkLen, rkLen int) (names []string, chars int) {
	room := size - 4 - 2*(pkLen+rkLen) // for the properties
	names = []string{"Payload"}
	fit := func() int { // the characters the properties' values can hold
		n := room
		for _, name := range names {
			n -= 8 + 2*len(name) + 4
		}
		return max(0, n/2)
	}
	for fit() > len(names)*tables.MaxStringUnits {
		names = append(names, "Payload"+strconv.Itoa(len(names)+1))
	}
	return names, fit()
}

// newPayloads makes payloads so that an entity with keys of the given
// lengths weighs size bytes (see payloadShape). With a largest size above
// size, the entities' sizes are drawn uniformly
// from size to largest: 64 of them, which the thread's writes cycle
// through.
func newPayloads(rng *rand.Rand, size, largest, pkLen, rkLen int) payloads {
	if largest <= size {
		return newPayloadsOf(rng, size, pkLen, rkLen, payloadCopies)
	}
	var p payloads
	for range 64 {
		one := newPayloadsOf(rng, size+rng.IntN(largest-size+1), pkLen, rkLen, 1)
		p.props = append(p.props, one.props...)
	}
	return p
}

// newPayloadsOf makes count payloads of one size, drawn from rng.
func newPayloadsOf(rng *rand.Rand, size, pkLen, rkLen, count int) payloads {
	names, n := payloadShape(size, pkLen, rkLen)
	var p payloads
	for range count {
		props := make([]tables.Property, len(names))
		for j, name := range names {
			length := n / len(names)
			if j < n%len(names) { // the remainder, a character each to the first
				length++
			}
			b := make([]byte, length)
			for i := range b {
				b[i] = payloadAlphabet[rng.IntN(len(payloadAlphabet))]
			}
			props[j] = tables.String(name, string(b))
		}
		p.props = append(p.props, props)
	}
	return p
}

// payloadSets makes a run's payloads once for each length of keys: the
// threads whose keys are as long share them. Their characters say nothing
// a run measures, only their sizes do, and a thread's own copies would
// hold a kilobyte-entity run's every thread to several kilobytes more.
type payloadSets struct {
	rng  *rand.Rand
	made map[[3]int]payloads // by entity size, PartitionKey and RowKey length
}

func newPayloadSets(seed uint64) *payloadSets {
	return &payloadSets{rng: rand.New(rand.NewPCG(seed, 0x9a7104d)), made: map[[3]int]payloads{}}
}

// payloads returns the payloads of a thread whose keys have the given
// lengths, and moves the thread's random source on past what making its
// own would have drawn, so that its later draws (its session's seed, its
// start) are those of a thread with payloads of its own: one draw per
// character, which skip makes at the cost of a few. (Drawing a character
// takes a second draw when the first is one of 16 values in 2⁶⁴, which a
// skip does not see: in a run of 15,000 threads of kilobyte entities, a
// chance of about one in ten billion that a thread draws otherwise.)
//
// Entities of sizes drawn from a range (largest above size) are the
// thread's own, drawn from rng.
func (s *payloadSets) payloads(src *rand.PCG, rng *rand.Rand, size, largest, pkLen, rkLen int) payloads {
	if largest > size {
		return newPayloads(rng, size, largest, pkLen, rkLen)
	}
	shape := [3]int{size, pkLen, rkLen}
	p, ok := s.made[shape]
	if !ok {
		p = newPayloadsOf(s.rng, size, pkLen, rkLen, payloadCopies)
		s.made[shape] = p
	}
	_, n := payloadShape(size, pkLen, rkLen)
	skip(src, uint64(payloadCopies*n))
	return p
}

// skip moves src on by n draws, in as many steps as n has bits: its state
// s is a 128-bit linear congruential generator, s' = a·s + c, so n steps
// are one, s' = aⁿ·s + c·(aⁿ⁻¹ + … + a + 1), its terms found by squaring.
func skip(src *rand.PCG, n uint64) {
	b, _ := src.MarshalBinary() // "pcg:", then the state's high and low words
	state := u128{binary.BigEndian.Uint64(b[4:]), binary.BigEndian.Uint64(b[12:])}
	mul := u128{2549297995355413924, 4865540595714422341} // math/rand/v2's PCG
	inc := u128{6364136223846793005, 1442695040888963407}
	accMul, accInc := u128{0, 1}, u128{}
	for ; n > 0; n >>= 1 {
		if n&1 != 0 {
			accMul = accMul.mul(mul)
			accInc = accInc.mul(mul).add(inc)
		}
		inc = mul.add(u128{0, 1}).mul(inc)
		mul = mul.mul(mul)
	}
	state = accMul.mul(state).add(accInc)
	b = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(b[:4], state.hi), state.lo)
	src.UnmarshalBinary(b)
}

// u128 is an unsigned 128-bit integer, arithmetic modulo 2¹²⁸.
type u128 struct{ hi, lo uint64 }

func (x u128) mul(y u128) u128 {
	hi, lo := bits.Mul64(x.lo, y.lo)
	return u128{hi + x.hi*y.lo + x.lo*y.hi, lo}
}

func (x u128) add(y u128) u128 {
	lo, c := bits.Add64(x.lo, y.lo, 0)
	return u128{x.hi + y.hi + c, lo}
}

// nextProps returns the next entity's properties. They are shared and must
// not be modified.
func (p *payloads) nextProps() []tables.Property {
	ps := p.props[p.i]
	if p.i++; p.i == len(p.props) { // not a remainder: a division costs tens of cycles
		p.i = 0
	}
	return ps
}
