// Package ratio measures one operation against its baseline in the same
// benchmark run: blocks of each, alternating, so that a noisy machine slows
// both alike, with CPU time from getrusage (the whole process: an in-process
// receiver counts on both sides) and heap allocations from runtime.MemStats.
package ratio

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// Block is how many operations each side runs before the other takes a turn.
const Block = 200

// Measure runs op n times and returns the process CPU time (user and
// system) and the heap allocations it took.
func Measure(op func(), n int) (time.Duration, uint64) {
	var m0, m1 runtime.MemStats
	var r0, r1 syscall.Rusage
	runtime.ReadMemStats(&m0)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	for i := 0; i < n; i++ {
		op()
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	runtime.ReadMemStats(&m1)
	cpu := func(r syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return cpu(r1) - cpu(r0), m1.Mallocs - m0.Mallocs
}

// Compare warms both sides, then runs a block of base and a block of
// subject per iteration of b.Loop, and reports time-x and allocs-x (subject
// / base) and each side's CPU ns and allocations per operation, named
// "<name>-cpu-ns/op" and "<name>-allocs/op". It reports; it never asserts.
func Compare(b *testing.B, subjectName string, subject func(), baseName string, base func()) {
	Measure(subject, Block)
	Measure(base, Block)
	var cpuSubject, cpuBase time.Duration
	var allocSubject, allocBase uint64
	n := 0
	for b.Loop() {
		c, a := Measure(base, Block)
		cpuBase, allocBase = cpuBase+c, allocBase+a
		c, a = Measure(subject, Block)
		cpuSubject, allocSubject = cpuSubject+c, allocSubject+a
		n += Block
	}
	b.ReportMetric(float64(cpuSubject)/float64(cpuBase), "time-x")
	b.ReportMetric(float64(allocSubject)/float64(allocBase), "allocs-x")
	b.ReportMetric(float64(cpuSubject.Nanoseconds())/float64(n), subjectName+"-cpu-ns/op")
	b.ReportMetric(float64(cpuBase.Nanoseconds())/float64(n), baseName+"-cpu-ns/op")
	b.ReportMetric(float64(allocSubject)/float64(n), subjectName+"-allocs/op")
	b.ReportMetric(float64(allocBase)/float64(n), baseName+"-allocs/op")
}
