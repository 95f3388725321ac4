package store

import "github.com/hookline/hookline/internal/fakes/dynamofake"

// NewFakeDB is the fake table of these tests, for the conformance suite
// (package storetest), which runs in package store_test.
func NewFakeDB() DynamoDB { return newFakeDB() }

// newFakeDB is a fake state table with the stack's indexes: gsi1, all
// attributes, the dead index, projecting DeadIndexAttributes only, and the
// delivery log, projecting LogIndexAttributes only.
func newFakeDB() *dynamofake.DB {
	db := dynamofake.NewDB(IndexTenant)
	db.AddIndex(IndexDead, AttrDeadPK, AttrDeadSK, DeadIndexAttributes...)
	db.AddIndex(IndexLog, AttrLogPK, AttrLogSK, LogIndexAttributes...)
	return db
}
