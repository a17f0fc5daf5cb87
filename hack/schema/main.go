// Command schema writes the JSON Schemas of kubectl captf's output
// (captf.io/v1alpha1) to docs/schema, generated from the Go types of
// pkg/api/v1alpha1 with their Go comments as descriptions:
//
//	go run ./hack/schema
//
// A test fails when the committed schemas are out of date.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	gopath "path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
)

// baseID is where the schemas are served: each $id is the URL of the
// committed file on the main branch, raw, so that a validator (or a
// person) that fetches the $id gets the schema itself.
const baseID = "https://raw.githubusercontent.com/captf-io/kubectl-captf/main/docs/schema/"

// schemaFiles are the published schemas: the kinds, and Lock alone for
// the objects of `locks -w -o json --output-watch-events`.
var schemaFiles = []struct {
	file string
	v    any
}{
	{"locklist.json", &v1alpha1.LockList{}},
	{"lock.json", &v1alpha1.Lock{}},
	{"explanation.json", &v1alpha1.Explanation{}},
	{"unlockresult.json", &v1alpha1.UnlockResult{}},
	{"unlockresultlist.json", &v1alpha1.UnlockResultList{}},
}

func main() {
	files, err := generate(".")
	if err == nil {
		err = os.MkdirAll(filepath.Join("docs", "schema"), 0o755)
	}
	for _, f := range schemaFiles {
		if err != nil {
			break
		}
		err = os.WriteFile(filepath.Join("docs", "schema", f.file), files[f.file], 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// generate returns each schema file's content; root is the repository's.
func generate(root string) (map[string][]byte, error) {
	comments, err := goComments(filepath.Join(root, "pkg", "api", "v1alpha1"), reflect.TypeOf(v1alpha1.Lock{}).PkgPath())
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, f := range schemaFiles {
		r := &jsonschema.Reflector{
			// Fields are only added within v1alpha1 (docs/output.md): a
			// consumer's validation must not fail on a new one.
			AllowAdditionalProperties: true,
			ExpandedStruct:            true,
			CommentMap:                comments,
			Mapper:                    mapper,
		}
		t := reflect.TypeOf(f.v).Elem()
		s := r.ReflectFromType(t)
		s.ID = jsonschema.ID(baseID + f.file)
		s.Title = "captf.io/v1alpha1 " + t.Name()
		defs := map[string]*jsonschema.Schema{t.Name(): s}
		for name, d := range s.Definitions {
			defs[name] = d
		}
		nullable(t, defs, map[reflect.Type]bool{})
		// A result that could not be read (action Failed) has no verdict.
		if t.Name() == "UnlockResult" || t.Name() == "UnlockResultList" {
			if d := defs["UnlockResult"]; d != nil {
				if v, ok := d.Properties.Get("verdict"); ok {
					v.Enum = append(v.Enum, "")
					v.Description += " Empty when the lock could not be read (action Failed)."
				}
			}
		}
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return nil, err
		}
		out[f.file] = append(b, '\n')
	}
	return out, nil
}

// mapper gives the schemas of types whose JSON is not their Go structure,
// and the fixed names of verdicts and actions.
func mapper(t reflect.Type) *jsonschema.Schema {
	switch t {
	case reflect.TypeOf(metav1.Time{}), reflect.TypeOf(metav1.MicroTime{}):
		// The zero time is written as null.
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "string", Format: "date-time"}, {Type: "null"}}}
	case reflect.TypeOf(metav1.FieldsV1{}):
		return &jsonschema.Schema{Type: "object"}
	case reflect.TypeOf(v1alpha1.Verdict("")):
		return &jsonschema.Schema{Type: "string", Description: "What CAPTF's controller makes of a lock; the names are fixed within v1alpha1.",
			Enum: []any{string(v1alpha1.Unlocked), string(v1alpha1.Live), string(v1alpha1.Stale), string(v1alpha1.Foreign), string(v1alpha1.Unknown)}}
	case reflect.TypeOf(v1alpha1.Action("")):
		return &jsonschema.Schema{Type: "string", Description: "What unlock did, or would do; the names are fixed within v1alpha1.",
			Enum: []any{string(v1alpha1.ActionUnlocked), string(v1alpha1.WouldUnlock), string(v1alpha1.AlreadyUnlocked), string(v1alpha1.Refused), string(v1alpha1.Conflict), string(v1alpha1.Failed)}}
	}
	return nil
}

// nullable lets null through where encoding/json writes it: a pointer,
// slice or map field without omitempty.
func nullable(t reflect.Type, defs map[string]*jsonschema.Schema, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] || mapper(t) != nil {
		return
	}
	seen[t] = true
	def := defs[t.Name()]
	var fields func(reflect.Type)
	fields = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := strings.Split(f.Tag.Get("json"), ",")
			if tag[0] == "-" || !f.IsExported() {
				continue
			}
			if f.Anonymous && tag[0] == "" {
				fields(f.Type) // inlined: its fields are this type's
				continue
			}
			nullable(f.Type, defs, seen)
			if def == nil || def.Properties == nil {
				continue
			}
			name := tag[0]
			if name == "" {
				name = f.Name
			}
			// The reflector drops a mapped type's description on a field
			// without a comment of its own.
			if m := mapper(f.Type); m != nil && m.Description != "" {
				if p, ok := def.Properties.Get(name); ok && p.Description == "" {
					p.Description = m.Description
				}
			}
			if slices.Contains(tag[1:], "omitempty") {
				continue
			}
			switch f.Type.Kind() {
			case reflect.Pointer, reflect.Slice, reflect.Map:
			default:
				continue
			}
			if p, ok := def.Properties.Get(name); ok && mapper(f.Type.Elem()) == nil {
				def.Properties.Set(name, &jsonschema.Schema{Description: p.Description, AnyOf: []*jsonschema.Schema{withoutDescription(p), {Type: "null"}}})
			}
		}
	}
	fields(t)
}

func withoutDescription(s *jsonschema.Schema) *jsonschema.Schema {
	c := *s
	c.Description = ""
	return &c
}

// goComments reads the Go comments of the package in dir, keyed as the
// reflector looks them up (import path, type, field).
func goComments(dir, importPath string) (map[string]string, error) {
	r := &jsonschema.Reflector{}
	if err := r.AddGoComments("", dir); err != nil {
		return nil, err
	}
	prefix := gopath.Join("", filepath.ToSlash(dir))
	out := map[string]string{}
	for k, v := range r.CommentMap {
		if rest, ok := strings.CutPrefix(k, prefix+"."); ok {
			out[importPath+"."+rest] = strings.Join(strings.Fields(v), " ")
		}
	}
	return out, nil
}
