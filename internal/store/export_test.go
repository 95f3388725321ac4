package store

import "github.com/hookline/hookline/internal/fakes/dynamofake"

// NewFakeDB is the fake table of these tests, for the conformance suite
// (package storetest), which runs in package store_test.
func NewFakeDB() DynamoDB { return dynamofake.NewDB(IndexTenant) }
