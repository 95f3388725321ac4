// Package logging builds the JSON slog logger every function logs with. Log
// lines carry ids (tenant, event, delivery, endpoint, attempt), never
// secrets, keys or payloads.
package logging

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// New returns a JSON logger writing to w at level ("" means INFO).
func New(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if level != "" {
		if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
			return nil, fmt.Errorf("log level %q: want DEBUG, INFO, WARN or ERROR", level)
		}
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})), nil
}
