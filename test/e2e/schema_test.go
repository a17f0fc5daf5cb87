package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
)

const schemaBase = "https://raw.githubusercontent.com/captf-io/kubectl-captf/main/docs/schema/"

// strict forbids the properties a schema does not name: the published
// schemas let new fields through (fields are only added within v1alpha1),
// but what kubectl captf prints today must be all described.
func strict(v any) {
	switch s := v.(type) {
	case map[string]any:
		if _, ok := s["properties"]; ok {
			if _, set := s["additionalProperties"]; !set {
				s["additionalProperties"] = false
			}
		}
		for _, c := range s {
			strict(c)
		}
	case []any:
		for _, c := range s {
			strict(c)
		}
	}
}

// schemas compiles docs/schema/*.json, strictly, and a schema of one event
// of `locks -w -o json --output-watch-events`: a metav1.WatchEvent whose
// object is a Lock.
func schemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	files := []string{"locklist.json", "lock.json", "explanation.json", "unlockresult.json", "unlockresultlist.json"}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join("..", "..", "docs", "schema", f))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		strict(doc)
		if id, _ := doc.(map[string]any)["$id"].(string); id != schemaBase+f {
			t.Fatalf("%s: $id %q", f, id)
		}
		if err := c.AddResource(schemaBase+f, doc); err != nil {
			t.Fatal(err)
		}
	}
	event, err := jsonschema.UnmarshalJSON(strings.NewReader(`{
		"type": "object", "required": ["type", "object"], "additionalProperties": false,
		"properties": {"type": {"enum": ["ADDED", "MODIFIED", "DELETED"]}, "object": {"$ref": "lock.json"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource(schemaBase+"watchevent.json", event); err != nil {
		t.Fatal(err)
	}
	out := map[string]*jsonschema.Schema{}
	for _, f := range append(files, "watchevent.json") {
		s, err := c.Compile(schemaBase + f)
		if err != nil {
			t.Fatalf("compiling %s: %v", f, err)
		}
		out[f] = s
	}
	return out
}

func validate(t *testing.T, s *jsonschema.Schema, what, doc string) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, doc)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s does not match its schema: %v\n%s", what, err, doc)
	}
}

// The real -o json of every command validates against docs/schema.
func TestOutputMatchesSchemas(t *testing.T) {
	seedVerdicts(t)
	s := schemas(t)
	kc := kubeconfigIn(t, verdictsNS)

	res := captf(t, kc, "locks", "-A", "-o", "json")
	if res.code != 0 {
		t.Fatalf("locks: exit %d %s", res.code, res.err)
	}
	validate(t, s["locklist.json"], "locks -A -o json", res.out)
	list := locksJSONFrom(t, res.out)
	res = captf(t, twoContexts(t), "locks", "--contexts", "up,down", "--context-timeout", "10s", "-o", "json")
	validate(t, s["locklist.json"], "locks --contexts -o json", res.out)
	// Each item alone, as a Lock.
	var raw struct{ Items []json.RawMessage }
	if err := json.Unmarshal([]byte(captf(t, kc, "locks", "-o", "json").out), &raw); err != nil || len(raw.Items) == 0 {
		t.Fatalf("items: %v", err)
	}
	for i, item := range raw.Items {
		validate(t, s["lock.json"], fmt.Sprintf("item %d", i), string(item))
	}
	// The schemas are not vacuous: a verdict that is not one, a missing
	// field and an undescribed one are each refused.
	for _, edit := range []func(m map[string]any){
		func(m map[string]any) { m["verdict"] = "stale" },
		func(m map[string]any) { delete(m, "captfClears") },
		func(m map[string]any) { m["bogus"] = 1 },
		func(m map[string]any) { m["lock"] = "held" },
	} {
		var m map[string]any
		if err := json.Unmarshal(raw.Items[0], &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		b, _ := json.Marshal(m)
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
		if s["lock.json"].Validate(v) == nil {
			t.Errorf("lock.json accepts %s", b)
		}
	}

	// explain and a single unlock's dry run, for every lock of every verdict.
	seen := map[v1alpha1.Verdict]bool{}
	for _, l := range list.Items {
		if l.Namespace != verdictsNS {
			continue
		}
		seen[l.Verdict] = true
		res := captf(t, kc, "explain", "lease/"+l.Name, "-o", "json")
		if res.code != 0 {
			t.Errorf("explain lease/%s: exit %d %s", l.Name, res.code, res.err)
			continue
		}
		validate(t, s["explanation.json"], "explain lease/"+l.Name, res.out)
		res = captf(t, kc, "unlock", "lease/"+l.Name, "-o", "json")
		if res.code != 0 && res.code != 3 {
			t.Errorf("unlock lease/%s: exit %d %s", l.Name, res.code, res.err)
			continue
		}
		validate(t, s["unlockresult.json"], "unlock lease/"+l.Name, res.out)
	}
	for _, v := range []v1alpha1.Verdict{v1alpha1.Unlocked, v1alpha1.Live, v1alpha1.Stale, v1alpha1.Foreign, v1alpha1.Unknown} {
		if !seen[v] {
			t.Errorf("no %s lock was validated", v)
		}
	}

	// unlock --all-stale's dry run: an UnlockResultList.
	res = captf(t, kc, "unlock", "--all-stale", "-o", "json")
	if res.code != 0 && res.code != 3 {
		t.Fatalf("unlock --all-stale: exit %d %s", res.code, res.err)
	}
	validate(t, s["unlockresultlist.json"], "unlock --all-stale -o json", res.out)
	var results v1alpha1.UnlockResultList
	if err := json.Unmarshal([]byte(res.out), &results); err != nil || len(results.Items) == 0 {
		t.Errorf("unlock --all-stale: %d items, %v", len(results.Items), err)
	}

	// locks -w --output-watch-events -o json: one WatchEvent per lock.
	cmd := exec.Command(plugin, "--kubeconfig", kc, "locks", "-w", "-o", "json", "--output-watch-events")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); checkRace(t, cmd.Process.Pid, "") }()
	docs := make(chan json.RawMessage)
	go func() {
		defer close(docs)
		dec := json.NewDecoder(bufio.NewReader(out))
		for {
			var m json.RawMessage
			if dec.Decode(&m) != nil {
				return
			}
			docs <- m
		}
	}()
	var want int
	for _, l := range list.Items {
		if l.Namespace == verdictsNS {
			want++
		}
	}
	for i := 0; i < want; i++ {
		select {
		case d, ok := <-docs:
			if !ok {
				t.Fatalf("the watch ended after %d events", i)
			}
			validate(t, s["watchevent.json"], "watch event", string(d))
		case <-time.After(60 * time.Second):
			t.Fatalf("%d watch events in 60 s, want %d", i, want)
		}
	}
}
