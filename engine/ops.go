package engine

import (
	"context"
	"fmt"
	"hash/maphash"
	"net/http"
	"slices"
	"time"

	"github.com/tablebench/tablebench/tables"
)

// units returns an entity's cost toward the throughput targets: its size
// in KiB, at least one.
func units(size int) float64 {
	if u := float64(size) / 1024; u > 1 { // math.Max's NaN and signed zeros are no size's: it is a call
		return u
	}
	return 1
}

// Insert stores a new entity and returns it as stored, with its Timestamp.
// An existing entity with the same keys gives 409 EntityAlreadyExists.
func (cl Client) Insert(ctx context.Context, tableName string, ent tables.Entity) (tables.Entity, error) {
	var rec record
	if err := cl.write(ctx, tableName, &ent, &rec, writeInsert, false, ""); err != nil {
		return tables.Entity{}, err
	}
	return rec.view(ent.PartitionKey, nil), nil
}

// InsertOnly is Insert for a caller that does not read the entity back, a
// simulated client: it builds no answer, and reads ent where it is.
func (cl Client) InsertOnly(ctx context.Context, tableName string, ent *tables.Entity) error {
	var rec record
	return cl.write(ctx, tableName, ent, &rec, writeInsert, false, "")
}

// Upsert inserts the entity or, if it exists, merges it into or replaces the
// existing one, unconditionally.
func (cl Client) Upsert(ctx context.Context, tableName string, ent tables.Entity, mode tables.UpdateMode) (tables.Entity, error) {
	var rec record
	if err := cl.write(ctx, tableName, &ent, &rec, writeUpsert, mode == tables.Merge, ""); err != nil {
		return tables.Entity{}, err
	}
	return rec.view(ent.PartitionKey, nil), nil
}

// Update merges into or replaces an existing entity. ifMatch is "*" (any
// version) or the ETag the entity must still have; a missing entity gives
// 404 ResourceNotFound and another version 412 UpdateConditionNotSatisfied.
func (cl Client) Update(ctx context.Context, tableName string, ent tables.Entity, mode tables.UpdateMode, ifMatch string) (tables.Entity, error) {
	if err := checkETag(ifMatch); err != nil {
		return tables.Entity{}, err
	}
	var rec record
	if err := cl.write(ctx, tableName, &ent, &rec, writeUpdate, mode == tables.Merge, ifMatch); err != nil {
		return tables.Entity{}, err
	}
	return rec.view(ent.PartitionKey, nil), nil
}

// UpsertOnly is Upsert for a caller that does not read the entity back, as
// InsertOnly is Insert.
func (cl Client) UpsertOnly(ctx context.Context, tableName string, ent *tables.Entity, mode tables.UpdateMode) error {
	var rec record
	return cl.write(ctx, tableName, ent, &rec, writeUpsert, mode == tables.Merge, "")
}

// UpdateOnly is Update for a caller that does not read the entity back, as
// InsertOnly is Insert.
func (cl Client) UpdateOnly(ctx context.Context, tableName string, ent *tables.Entity, mode tables.UpdateMode, ifMatch string) error {
	if err := checkETag(ifMatch); err != nil {
		return err
	}
	var rec record
	return cl.write(ctx, tableName, ent, &rec, writeUpdate, mode == tables.Merge, ifMatch)
}

// writeKind is what a write does with an entity stored under its keys.
type writeKind uint8

const (
	writeInsert writeKind = iota // is refused
	writeUpsert                  // replaces it or merges into it; without one, inserts
	writeUpdate                  // replaces it or merges into it if it matches ifMatch
)

// write validates and stores an entity, as kind says, merging its
// properties into those stored when merge is true, and leaves in rec the
// record stored. rec stays the caller's, on the stack: the rows store a
// copy.
func (cl Client) write(ctx context.Context, tableName string, ent *tables.Entity, rec *record, kind writeKind, mergeProps bool, ifMatch string) error {
	e := cl.e
	t, terr := e.table(tableName)
	if terr != nil {
		return terr
	}
	var size int
	var verr *tables.Error
	size, verr = prepareFor(cl.c, ent, e.cfg.MaxKeyLength, rec)
	if verr == nil && e.cfg.Profile.MaxRowKeyBytes > 0 { // most profiles have no limit of their own: no call
		verr = e.tableAPIRowKey(ent.RowKey)
	}
	if verr != nil {
		return verr
	}
	pk := ent.PartitionKey
	if kind == writeInsert { // the tree's own descent finds an existing entity
		return e.do(ctx, cl.c, t, pk, opWrite, 1, units(size), func(rp *rangePartition, now int64) (int, *tables.Error) {
			if !rp.insert(cl.c, pk, rec, rp.stamp(now)) {
				return 1, errEntityExists
			}
			return 1, nil
		})
	}
	return e.do(ctx, cl.c, t, pk, opWrite, 1, units(size), func(rp *rangePartition, now int64) (int, *tables.Error) {
		old, found := rp.get(cl.c, pk, rec.rk)
		if kind == writeUpdate {
			if err := matches(old, found, ifMatch); err != nil {
				return 1, err
			}
		}
		if found && mergeProps {
			rec.props = merge(old.props, rec.props)
		}
		rec.ts = rp.stamp(now)
		rp.put(cl.c, pk, rec)
		return 1, nil
	})
}

// Get returns one entity, with only the selected properties when sel is not
// nil. A missing entity gives 404 ResourceNotFound.
func (cl Client) Get(ctx context.Context, tableName, pk, rk string, sel []string) (tables.Entity, error) {
	e := cl.e
	t, terr := e.table(tableName)
	if terr != nil {
		return tables.Entity{}, terr
	}
	var out tables.Entity
	var kib float64 // the cosmos profile charges a read by the size read
	err := e.do(ctx, cl.c, t, pk, opRead, 1, 1, func(rp *rangePartition, now int64) (int, *tables.Error) {
		r, ok := rp.get(cl.c, pk, rk)
		if !ok {
			return 1, errEntityNotFound
		}
		out = r.view(pk, sel)
		if e.cfg.Profile.RequestUnits() {
			kib = units(recordSize(pk, &r))
		}
		return 1, nil
	})
	if err == nil && kib > 1 {
		cl.chargeRead(t, pk, kib)
	}
	return out, err
}

// Delete removes an entity. ifMatch is "*" or the ETag the entity must have.
func (cl Client) Delete(ctx context.Context, tableName, pk, rk, ifMatch string) error {
	e := cl.e
	if err := checkETag(ifMatch); err != nil {
		return err
	}
	t, terr := e.table(tableName)
	if terr != nil {
		return terr
	}
	return e.do(ctx, cl.c, t, pk, opWrite, 1, 1, func(rp *rangePartition, now int64) (int, *tables.Error) {
		old, found := rp.get(nil, pk, rk)
		if err := matches(old, found, ifMatch); err != nil {
			return 1, err
		}
		rp.remove(pk, rk)
		return 1, nil
	})
}

// checkETag checks the form of an If-Match value: "*" or a weak entity tag,
// the only kind the Table service issues. A well-formed weak tag the service
// never issued matches nothing, so it is answered 412 by matches, as the
// service answers W/"wrong"; a strong tag is refused as malformed (400), and
// W/ is read in either case, as the service reads it.
func checkETag(ifMatch string) *tables.Error {
	if ifMatch == "*" {
		return nil
	}
	if ifMatch == "" {
		return tables.BadRequest(tables.CodeInvalidInput, "An If-Match condition is required: use \"*\" for any version, or the entity's ETag.")
	}
	weak := len(ifMatch) > 2 && (ifMatch[0] == 'W' || ifMatch[0] == 'w') && ifMatch[1] == '/'
	if !weak {
		return tables.BadRequest(tables.CodeInvalidInput, fmt.Sprintf("The ETag %q is not valid: the service's ETags are weak (W/\"...\"); use \"*\" or an ETag the service returned.", ifMatch))
	}
	if tag := ifMatch[2:]; len(tag) < 2 || tag[0] != '"' || tag[len(tag)-1] != '"' {
		return tables.BadRequest(tables.CodeInvalidInput, fmt.Sprintf("The ETag %q is not valid: use \"*\" or an ETag the service returned.", ifMatch))
	}
	return nil
}

// matches checks ifMatch against old, the stored entity if found.
func matches(old record, found bool, ifMatch string) *tables.Error {
	if !found {
		return errEntityNotFound
	}
	if ifMatch == "*" {
		return nil
	}
	// An ETag is opaque: it matches only as the service wrote it, so one
	// that names the same instant in other digits does not; only its W/ may
	// be written w/.
	etag := tables.FormatETag(time.Unix(0, old.ts))
	if ifMatch != etag && (len(ifMatch) < 2 || ifMatch[0] != 'w' || ifMatch[1:] != etag[1:]) {
		return errCondition
	}
	return nil
}

// Batch runs an entity group transaction: at most 100 operations on
// distinct entities of one PartitionKey, at most 4 MiB, executed in order and
// atomically, every written entity sharing one Timestamp. It returns the
// entities as stored (keys only for deletes). If an operation fails nothing
// is applied and the error's Index is the operation's 0-based index.
func (cl Client) Batch(ctx context.Context, tableName string, ops []tables.BatchOp) ([]tables.Entity, error) {
	return cl.BatchAppend(ctx, tableName, ops, nil)
}

// BatchAppend is Batch, appending the entities as stored to dst and
// returning the extended slice (dst unchanged on an error): a caller that
// runs batch after batch reuses one array for them.
func (cl Client) BatchAppend(ctx context.Context, tableName string, ops []tables.BatchOp, dst []tables.Entity) ([]tables.Entity, error) {
	return cl.batch(ctx, tableName, ops, dst, true)
}

// BatchOnly is Batch for a caller that does not read the entities back, a
// simulated client: it builds none.
func (cl Client) BatchOnly(ctx context.Context, tableName string, ops []tables.BatchOp) error {
	_, err := cl.batch(ctx, tableName, ops, nil, false)
	return err
}

// batch runs a batch as BatchAppend does, appending the entities as stored
// to dst if views is true.
func (cl Client) batch(ctx context.Context, tableName string, ops []tables.BatchOp, dst []tables.Entity, views bool) ([]tables.Entity, error) {
	e := cl.e
	if len(ops) == 0 {
		return dst, tables.BadRequest(tables.CodeInvalidInput, "The batch request contains no operations: add 1 to 100 operations.")
	}
	if len(ops) > tables.MaxBatchOps {
		return dst, tables.BadRequest(tables.CodeInvalidInput, "The batch request operation exceeds the maximum 100 changes per change set.")
	}
	t, terr := e.table(tableName)
	if terr != nil {
		return dst, terr
	}
	pk := ops[0].Entity.PartitionKey
	recs, total, inserts, verr := e.prepareBatch(ops)
	if verr != nil {
		return dst, verr
	}
	var grown, out []tables.Entity // out nil: no views
	if views {
		grown = slices.Grow(dst, len(ops))[:len(dst)+len(ops)]
		out = grown[len(dst):]
	}
	err := e.do(ctx, cl.c, t, pk, opWrite, len(ops), total, func(rp *rangePartition, now int64) (int, *tables.Error) {
		// The key's rows are looked up once for the whole batch, and
		// forgotten at its end if it leaves them empty.
		g := rp.data.rowsFor(pk)
		defer rp.data.drop(g)
		if inserts {
			return len(ops), insertAll(g, pk, recs, out, rp.stamp(now))
		}
		return len(ops), applyAll(g, pk, ops, recs, out, rp, now)
	})
	if err != nil {
		return dst, err
	}
	return grown, nil
}

// prepareBatch checks a batch's operations, each as its kind needs, and
// makes their records; it returns them with the entity units they cost and
// whether every operation is an insert.
func (e *Engine) prepareBatch(ops []tables.BatchOp) ([]record, float64, bool, *tables.Error) {
	pk := ops[0].Entity.PartitionKey
	// Every operation's PartitionKey is pk, checked once: the first
	// operation's check, as it would be, and for the others it passes.
	pkLen, err := keyUnits("PartitionKey", pk, e.cfg.MaxKeyLength)
	if err != nil {
		return nil, 0, false, withIndex(err, 0)
	}
	// The batch's records share one array: the rows store copies.
	recs := make([]record, len(ops))
	var seen rowKeySet
	var total float64
	var size int
	inserts := true // every operation an insert
	for i := range ops {
		op := &ops[i]
		inserts = inserts && op.Kind == tables.BatchInsert
		if op.Entity.PartitionKey != pk {
			return nil, 0, false, withIndex(tables.BadRequest(tables.CodeCommandsInBatchActOnDifferentPK, "All commands in a batch must operate on the same partition."), i)
		}
		if !seen.add(ops, i) {
			return nil, 0, false, withIndex(tables.BadRequest(tables.CodeInvalidDuplicateRow, "The batch request contains multiple changes with same row key. An entity can appear only once in a batch request."), i)
		}
		if op.Kind == tables.BatchDelete {
			if err := validateKey("RowKey", op.Entity.RowKey, e.cfg.MaxKeyLength); err != nil {
				return nil, 0, false, withIndex(err, i)
			}
			recs[i] = record{rk: op.Entity.RowKey}
			total++
		} else {
			r, sz, err := prepareAfter(&op.Entity, e.cfg.MaxKeyLength, pkLen)
			if err == nil {
				err = e.tableAPIRowKey(op.Entity.RowKey)
			}
			if err != nil {
				return nil, 0, false, withIndex(err, i)
			}
			recs[i] = r
			total += units(sz)
			size += sz
		}
		if op.Kind == tables.BatchUpdateMerge || op.Kind == tables.BatchUpdateReplace || op.Kind == tables.BatchDelete {
			if err := checkETag(op.IfMatch); err != nil {
				return nil, 0, false, withIndex(err, i)
			}
		}
		if op.Kind > tables.BatchDelete {
			return nil, 0, false, withIndex(tables.BadRequest(tables.CodeInvalidInput, fmt.Sprintf("Unknown batch operation kind %d.", op.Kind)), i)
		}
	}
	if size > tables.MaxBatchBytes {
		return nil, 0, false, tables.NewError(http.StatusRequestEntityTooLarge, tables.CodeRequestBodyTooLarge, "The batch request is larger than 4 MiB.")
	}
	if m := e.cfg.Profile.MaxBatchBytes; m > 0 && size > m {
		return nil, 0, false, tables.NewError(http.StatusRequestEntityTooLarge, tables.CodeRequestBodyTooLarge, fmt.Sprintf("The batch request is larger than %d bytes, the most this service takes.", m))
	}
	return recs, total, inserts, nil
}

// insertAll stores a batch of inserts in the rows of its PartitionKey, g,
// at ts, and their views in out unless it is nil.
func insertAll(g *pkRows, pk string, recs []record, out []tables.Entity, ts int64) *tables.Error {
	// Inserts, as most batches are: each is stored as it is checked,
	// one descent of the tree each, and the ones before are taken
	// out again if one finds its entity there.
	for i := range recs {
		recs[i].ts = ts
		if _, found := g.rows.put(&recs[i], true); found {
			for j := range i {
				g.rows.remove(recs[j].rk)
			}
			return withIndex(errEntityExists, i)
		}
		if out != nil {
			out[i] = recs[i].view(pk, nil)
		}
	}
	return nil
}

// applyAll checks and applies a batch of any operations to the rows of its
// PartitionKey, g, and sets their views in out unless it is nil.
func applyAll(g *pkRows, pk string, ops []tables.BatchOp, recs []record, out []tables.Entity, rp *rangePartition, now int64) *tables.Error {
	// Check every operation against the state the earlier ones leave,
	// then apply all of them: nothing is applied if one fails.
	var olds [tables.MaxBatchOps]record
	var had [tables.MaxBatchOps]bool
	for i, op := range ops {
		old, found := g.rows.get(recs[i].rk)
		olds[i], had[i] = old, found
		var err *tables.Error
		switch op.Kind {
		case tables.BatchInsert:
			if found {
				err = errEntityExists
			}
		case tables.BatchUpdateMerge, tables.BatchUpdateReplace, tables.BatchDelete:
			err = matches(old, found, op.IfMatch)
		}
		if err != nil {
			return withIndex(err, i)
		}
	}
	ts := rp.stamp(now)
	for i, op := range ops {
		r := &recs[i]
		switch op.Kind {
		case tables.BatchDelete:
			g.rows.remove(r.rk)
			if out != nil {
				out[i] = tables.Entity{PartitionKey: pk, RowKey: r.rk}
			}
			continue
		case tables.BatchUpdateMerge, tables.BatchUpsertMerge:
			if had[i] {
				r.props = merge(olds[i].props, r.props)
			}
		}
		r.ts = ts
		g.rows.put(r, false)
		if out != nil {
			out[i] = r.view(pk, nil)
		}
	}
	return nil
}

// Load stores entities directly, replacing any with the same keys, outside
// the performance model: for setting up data that a measured run then
// reads. Entities are validated as for any write.
func (e *Engine) Load(ctx context.Context, tableName string, entities []tables.Entity) error {
	t, terr := e.table(tableName)
	if terr != nil {
		return terr
	}
	for i := range entities {
		rec, _, err := prepare(&entities[i], e.cfg.MaxKeyLength)
		if err != nil {
			return err
		}
		pk := entities[i].PartitionKey
		rp := t.lock(pk, false)
		rec.ts = rp.stamp(e.clock.Now().UnixNano())
		rp.put(nil, pk, &rec)
		rp.mu.Unlock()
	}
	return nil
}

// rowKeySet is the RowKeys of a batch's operations, for finding one that
// repeats: an open-addressed table of operation indexes on the stack, as a
// map cost an allocation and more hashing per batch.
type rowKeySet [256]uint8 // 1 + an operation's index, or 0; a batch fills at most 100

var rowKeySeed = maphash.MakeSeed()

// add adds the RowKey of ops[i] and reports whether it was new: false
// when an earlier operation has it.
func (s *rowKeySet) add(ops []tables.BatchOp, i int) bool {
	k := ops[i].Entity.RowKey
	for h := maphash.String(rowKeySeed, k); ; h++ {
		slot := &s[h%uint64(len(s))]
		if *slot == 0 {
			*slot = uint8(i + 1)
			return true
		}
		if ops[*slot-1].Entity.RowKey == k {
			return false
		}
	}
}
