// Package coldstart measures how fast and how big the hookline functions are
// next to a hello-world Go Lambda built the same way (issue 8: at most 2x
// the hello world in both).
//
// # What is measured
//
// Size is the size of the bootstrap binary as `make build` produces it
// (Build mirrors its go build flags). Start is the time from just before
// the process is started to its first request for an invocation
// (GET /2018-06-01/runtime/invocation/next) on a local stub of the Lambda
// Runtime API: the init phase of a cold start, without the download of the
// code and the creation of the sandbox, which Lambda does alike for every
// function of a runtime. The process is killed as soon as it has asked, so
// no handler runs.
//
// Every start runs in a fresh environment of Lambda's variables, fake
// credentials and the function's own configuration (fake table names and
// queue URLs): nothing may reach AWS, or anything else, at start. A function
// that needs the network at start would fail here rather than be measured.
//
// # Noise
//
// Starts are a few milliseconds, so the machine's noise matters.
// MeasureInterleaved starts the binaries round-robin, one start of each per
// round, rotating which goes first, so that noise hits all of them alike;
// the median over the rounds is the figure to compare, Min the best case.
package coldstart
