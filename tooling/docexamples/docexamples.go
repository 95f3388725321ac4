// Package docexamples finds the shell examples in the project's Markdown
// documents, so that a test can run them as they are written.
//
// A shell example is a fenced code block whose info string is sh, bash,
// shell or zsh. Every one is meant to run; one that cannot run in a test
// (it deploys to AWS, or runs for an hour) says so, and why, with a mark on
// the last non-blank line before its opening fence:
//
//	<!-- example: not run: needs an AWS account -->
//
// Parse refuses what would let an example escape the test: a mark without a
// reason or without a shell block after it, a fence left open, a curl
// command written inline (`curl ...` in running text) instead of in a
// block, and a curl command in a block that runs without --fail (or -f,
// or --fail-with-body), whose HTTP errors would pass unnoticed.
package docexamples

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// Block is one shell example.
type Block struct {
	// File is the document's path, as given to Parse.
	File string
	// Line is the line of the opening fence, counting from 1.
	Line int
	// Lang is the info string's first word (sh, bash, shell or zsh).
	Lang string
	// Code is the block's text, every line ending in a newline.
	Code string
	// NotRun is the reason its mark gives; empty for a block that runs.
	NotRun string
}

// String names the block as file:line.
func (b Block) String() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

var (
	markRE      = regexp.MustCompile(`^\s*<!--\s*example:\s*not run\s*:?\s*(.*?)\s*-->\s*$`)
	markLikeRE  = regexp.MustCompile(`<!--\s*example\b`)
	fenceRE     = regexp.MustCompile("^( {0,3})(`{3,}|~{3,})\\s*([^`\\s]*)")
	inlineCurl  = regexp.MustCompile("`\\s*curl\\s[^`]*`")
	curlCommand = regexp.MustCompile(`(^|[\s;|&(]|\$\()curl\s`)
	curlFails   = regexp.MustCompile(`\s(--fail(-with-body)?|-[a-zA-Z]*f[a-zA-Z]*)(\s|$)`)
)

// shells are the info strings of the blocks Parse returns.
var shells = map[string]bool{"sh": true, "bash": true, "shell": true, "zsh": true}

// Parse returns the shell examples of the Markdown document src, read from
// file, in order, or the first reason the document breaks the rules in the
// package comment.
func Parse(file string, src []byte) ([]Block, error) {
	var (
		blocks   []Block
		open     *Block // the fenced block being read, shell or not
		fence    string // its opening fence
		code     strings.Builder
		mark     string // the reason of the mark waiting for its block
		markLine int
		n        int
	)
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		n++
		line := sc.Text()
		if open != nil {
			if m := fenceRE.FindStringSubmatch(line); m != nil && m[3] == "" && m[2][0] == fence[0] && len(m[2]) >= len(fence) && strings.TrimSpace(line[len(m[1])+len(m[2]):]) == "" {
				if shells[open.Lang] {
					open.Code = code.String()
					if open.NotRun == "" {
						if err := checkCurl(*open); err != nil {
							return nil, err
						}
					}
					blocks = append(blocks, *open)
				}
				open = nil
				continue
			}
			code.WriteString(line)
			code.WriteByte('\n')
			continue
		}
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			open, fence = &Block{File: file, Line: n, Lang: strings.ToLower(m[3])}, m[2]
			code.Reset()
			if markLine != 0 {
				if !shells[open.Lang] {
					return nil, fmt.Errorf("%s:%d: the example mark is followed by a %q block, not a shell block", file, markLine, open.Lang)
				}
				open.NotRun, markLine = mark, 0
			}
			continue
		}
		if m := markRE.FindStringSubmatch(line); m != nil {
			if markLine != 0 {
				return nil, fmt.Errorf("%s:%d: an example mark follows another (line %d) with no block between", file, n, markLine)
			}
			if m[1] == "" {
				return nil, fmt.Errorf("%s:%d: the example mark gives no reason: write <!-- example: not run: <why> -->", file, n)
			}
			mark, markLine = m[1], n
			continue
		}
		if markLikeRE.MatchString(line) {
			return nil, fmt.Errorf("%s:%d: a malformed example mark: write <!-- example: not run: <why> -->", file, n)
		}
		if strings.TrimSpace(line) != "" && markLine != 0 {
			return nil, fmt.Errorf("%s:%d: the example mark is not followed by a shell block", file, markLine)
		}
		if inlineCurl.MatchString(line) {
			return nil, fmt.Errorf("%s:%d: a curl command in running text is an example no test runs: put it in a ```sh block", file, n)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if open != nil {
		return nil, fmt.Errorf("%s:%d: the code block is never closed", file, open.Line)
	}
	if markLine != 0 {
		return nil, fmt.Errorf("%s:%d: the example mark is not followed by a shell block", file, markLine)
	}
	return blocks, nil
}

// checkCurl refuses a curl command, in a block that runs, that would exit 0
// on an HTTP error. Continued lines (ending in \) are one command.
func checkCurl(b Block) error {
	joined := strings.ReplaceAll(b.Code, "\\\n", " ")
	for i, cmd := range strings.Split(joined, "\n") {
		if strings.HasPrefix(strings.TrimSpace(cmd), "#") {
			continue
		}
		for _, loc := range curlCommand.FindAllStringIndex(cmd, -1) {
			if !curlFails.MatchString(command(cmd[loc[1]-1:])) {
				return fmt.Errorf("%s: line %d (continued lines joined): curl without --fail-with-body (or -f) exits 0 on an HTTP error, so a broken example would pass: %s", b, i+1, strings.TrimSpace(cmd))
			}
		}
	}
	return nil
}

// command returns s up to the first |, ;, & or ) outside quotes, the
// arguments of the command s starts, with the text inside quotes removed: a
// quoted "--fail" is data, not an option.
func command(s string) string {
	var out strings.Builder
	var quote rune
	for _, c := range s {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
				out.WriteRune(c)
			}
		case c == '\'' || c == '"':
			quote = c
			out.WriteRune(c)
		case strings.ContainsRune("|;&)", c):
			return out.String()
		default:
			out.WriteRune(c)
		}
	}
	return out.String()
}
