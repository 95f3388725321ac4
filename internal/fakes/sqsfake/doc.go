// Package sqsfake is one in-memory SQS for tests of any package, held to the
// AWS rules that matter to hookline (which the local cloud forgives) by the
// conformance suite in package sqstest, which also runs against the local
// cloud (e2e/sqs_conformance_test.go).
//
// A Queue enforces: at most 10 entries per batch, ids unique and
// [A-Za-z0-9_-]{1,80}; 262,144 bytes per message and per batch (body and
// attributes); DelaySeconds 0..900; VisibilityTimeout 0..43200 and no message
// hidden more than 12 h after its receive; WaitTimeSeconds 0..20; the
// characters SQS allows (#x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF); MessageGroupId of 1
// to 128 ASCII letters, digits or punctuation; and the in-flight limit
// (120,000 on a standard queue; Config.InFlightLimit), past which a receive
// gets nothing and no error, as on AWS; at most 10 message attributes a
// message, each named by SQS's rules (letters, digits, _ - .; no "AWS." or
// "Amazon." prefix; at most 256 characters) with a non-empty String, Number
// or Binary value. With Config.MustExist a send
// to a queue not created is QueueDoesNotExist.
//
// Queue is also an http.Handler for SendMessage in SQS's AWS JSON protocol
// (package awsfake), for code that builds its own SDK clients (package
// destination); Config.Authorize stands for IAM there.
//
// Every limit and rule is written here from AWS's documentation (the
// constants and rules.go cite it), never read from the product: package
// message keeps a sender to the same rules, and a fake that shared its
// numbers would agree with a wrong one. The codeshape test
// TestFakesImportNoProduct holds that.
//
// Time is injected (Config.Now); nothing waits: a long poll returns at once.
// A test scripts an unavailable SQS with Config.Fail, holds senders to a
// product rule with Config.CheckSend, and reads what was accepted with
// Messages, Sent and Answered.
package sqsfake
