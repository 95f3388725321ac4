package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// indexDef is one global secondary index as CloudFormation compares two
// versions of a table: its name, key schema and projection. An index
// whose key schema or projection changes is deleted and created again.
type indexDef struct {
	Name string `json:"name"`
	// Keys are "<attribute> HASH" and "<attribute> RANGE", in order.
	Keys []string `json:"keys"`
	// Projection is ALL, KEYS_ONLY, or INCLUDE and the attributes, sorted.
	Projection string `json:"projection"`
}

// tableIndexes is a template's tables by the name of their construct
// ("outbox", "state"), each with its global secondary indexes, sorted by
// name.
type tableIndexes map[string][]indexDef

// tableNames map the start of a table's logical ID in the app's stack
// (the instance's id "Default" is left out of logical IDs) to its name.
var tableNames = map[string]string{"TablesOutbox": "outbox", "TablesState": "state"}

// tablesOf reads the tables' indexes out of a synthesized template.
func tablesOf(template []byte) (tableIndexes, error) {
	var tpl struct {
		Resources map[string]struct {
			Type       string
			Properties struct {
				GlobalSecondaryIndexes []struct {
					IndexName  string
					KeySchema  []struct{ AttributeName, KeyType string }
					Projection struct {
						ProjectionType   string
						NonKeyAttributes []string
					}
				}
			}
		}
	}
	if err := json.Unmarshal(template, &tpl); err != nil {
		return nil, fmt.Errorf("read the template: %w", err)
	}
	out := tableIndexes{}
	for id, r := range tpl.Resources {
		if r.Type != "AWS::DynamoDB::Table" {
			continue
		}
		name := ""
		for prefix, n := range tableNames {
			if strings.HasPrefix(id, prefix) {
				name = n
			}
		}
		if name == "" {
			return nil, fmt.Errorf("table %s: not one of hookline's (%v)", id, slices.Sorted(maps.Keys(tableNames)))
		}
		defs := []indexDef{}
		for _, g := range r.Properties.GlobalSecondaryIndexes {
			d := indexDef{Name: g.IndexName, Projection: g.Projection.ProjectionType}
			for _, k := range g.KeySchema {
				d.Keys = append(d.Keys, k.AttributeName+" "+k.KeyType)
			}
			if attrs := slices.Sorted(slices.Values(g.Projection.NonKeyAttributes)); len(attrs) > 0 {
				d.Projection += " " + strings.Join(attrs, ",")
			}
			defs = append(defs, d)
		}
		slices.SortFunc(defs, func(a, b indexDef) int { return strings.Compare(a.Name, b.Name) })
		out[name] = defs
	}
	if len(out) != len(tableNames) {
		return nil, fmt.Errorf("the template has tables %v, want %v", slices.Sorted(maps.Keys(out)), slices.Sorted(maps.Values(tableNames)))
	}
	return out, nil
}

// indexUpdates is, per table, what CloudFormation does to its indexes
// to take a stack from before to after: "create X", "delete X", and for an
// index whose key schema or projection differs, both. CloudFormation
// refuses an update with more than one of them for a table.
func indexUpdates(before, after tableIndexes) map[string][]string {
	out := map[string][]string{}
	for _, table := range slices.Sorted(maps.Keys(after)) {
		was := map[string]indexDef{}
		for _, d := range before[table] {
			was[d.Name] = d
		}
		for _, d := range after[table] {
			old, ok := was[d.Name]
			switch {
			case !ok:
				out[table] = append(out[table], "create "+d.Name)
			case !slices.Equal(old.Keys, d.Keys) || old.Projection != d.Projection:
				out[table] = append(out[table], "delete "+d.Name+" (key schema or projection changed)", "create "+d.Name)
			}
			delete(was, d.Name)
		}
		for _, name := range slices.Sorted(maps.Keys(was)) {
			out[table] = append(out[table], "delete "+name)
		}
	}
	return out
}

// printTables writes the tables' indexes of each template file to w, as
// JSON: `go run ./infra tables FILE...`.
func printTables(w io.Writer, files []string) error {
	all := map[string]tableIndexes{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if all[f], err = tablesOf(b); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(all)
}
