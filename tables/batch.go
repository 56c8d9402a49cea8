package tables

// UpdateMode says how a write combines with an existing entity.
type UpdateMode uint8

const (
	// Merge keeps the existing properties the write does not name.
	Merge UpdateMode = iota
	// Replace replaces the whole entity.
	Replace
)

// BatchOpKind is the kind of one operation of an entity group transaction.
type BatchOpKind uint8

// The operations a batch can hold.
const (
	BatchInsert BatchOpKind = iota
	BatchUpdateMerge
	BatchUpdateReplace
	BatchUpsertMerge
	BatchUpsertReplace
	BatchDelete
)

// BatchOp is one operation of an entity group transaction. For BatchDelete
// only the entity's keys are used. IfMatch applies to updates and deletes.
type BatchOp struct {
	Kind    BatchOpKind
	Entity  Entity
	IfMatch string
}
