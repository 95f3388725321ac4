package store

import "github.com/hookline/hookline/internal/fakes/dynamofake"

// newFakeDB is a fake state table with the stack's indexes: gsi1, all
// attributes, the dead index, projecting DeadIndexAttributes only, and the
// delivery log, projecting LogIndexAttributes only: storefake.NewDB, which
// these tests, inside package store, cannot import.
func newFakeDB() *dynamofake.DB {
	db := dynamofake.NewDB(IndexTenant)
	db.AddIndex(IndexDead, AttrDeadPK, AttrDeadSK, DeadIndexAttributes...)
	db.AddIndex(IndexLog, AttrLogPK, AttrLogSK, LogIndexAttributes...)
	return db
}
