package cmd

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/util/jsonpath"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
)

// lockSorter is `locks --sort-by`: kubectl get's --sort-by over the items
// of a LockList, in their JSON (map) form, as `-o json` prints them.
type lockSorter struct {
	field string // the JSONPath template, "{.lock.created}"
}

// relaxedJSONPath is kubectl's RelaxedJSONPathExpression: "name1.name2",
// ".name1.name2", "{name1.name2}" and "{.name1.name2}" all mean
// "{.name1.name2}".
var relaxedJSONPath = regexp.MustCompile(`^\{\.?([^{}]+)\}$|^\.?([^{}]+)$`)

// newLockSorter parses a --sort-by expression; nil when it is empty.
func newLockSorter(expr string) (*lockSorter, error) {
	if expr == "" {
		return nil, nil
	}
	m := relaxedJSONPath.FindStringSubmatch(expr)
	if m == nil {
		return nil, fmt.Errorf("--sort-by %q: unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'", expr)
	}
	spec := m[1]
	if spec == "" {
		spec = m[2]
	}
	s := &lockSorter{field: "{." + spec + "}"}
	if _, err := s.parser(); err != nil {
		return nil, fmt.Errorf("--sort-by %q: %v", expr, err)
	}
	return s, nil
}

func (s *lockSorter) parser() (*jsonpath.JSONPath, error) {
	p := jsonpath.New("sorting").AllowMissingKeys(true)
	return p, p.Parse(s.field)
}

// sort orders the locks by the field, stably: locks whose values compare
// equal keep the documented order. Like kubectl, a path that matches no
// item is an error, and items without the field come first.
func (s *lockSorter) sort(locks []v1alpha1.Lock) error {
	if s == nil || len(locks) == 0 {
		return nil
	}
	p, err := s.parser()
	if err != nil {
		return err
	}
	values := make([]reflect.Value, len(locks))
	found := make([]bool, len(locks))
	foundOnce := false
	for i := range locks {
		m, err := lockMap(&locks[i])
		if err != nil {
			return err
		}
		results, err := p.FindResults(m)
		if err != nil {
			return fmt.Errorf("--sort-by %s: %v", s.field, err)
		}
		if len(results) > 0 && len(results[0]) > 0 {
			values[i], found[i], foundOnce = results[0][0], true, true
		}
	}
	if !foundOnce {
		return fmt.Errorf("couldn't find any field with path %q in the list of objects", s.field)
	}
	idx := make([]int, len(locks))
	for i := range idx {
		idx[i] = i
	}
	var sortErr error
	sort.SliceStable(idx, func(a, b int) bool {
		i, j := idx[a], idx[b]
		switch {
		case !found[i] && !found[j]:
			return false
		case !found[i]:
			return true
		case !found[j]:
			return false
		}
		less, err := isLess(values[i], values[j])
		if err != nil && sortErr == nil {
			sortErr = fmt.Errorf("field %s is an unsortable type: %s, err: %v", s.field, values[i].Kind(), err)
		}
		return less
	})
	if sortErr != nil {
		return sortErr
	}
	sorted := make([]v1alpha1.Lock, len(locks))
	for k, i := range idx {
		sorted[k] = locks[i]
	}
	copy(locks, sorted)
	return nil
}

// lockMap is the lock as -o json prints it, decoded into maps, with whole
// numbers as int64 (apimachinery's JSON decoding, as kubectl's
// unstructured objects have them).
func lockMap(l *v1alpha1.Lock) (map[string]any, error) {
	b, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := utiljson.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// isLess is kubectl's sorter comparison (k8s.io/kubectl/pkg/cmd/get/sorter.go)
// for the values of JSON maps: numbers by value, strings in natural order
// (or as quantities when both parse as one), null first. Two strings that
// both parse as RFC 3339 times (`created`, `creationTimestamp`) compare as
// times, as kubectl compares metav1.Time: their fractional seconds differ
// in length, so neither a plain nor a natural string order would do.
func isLess(i, j reflect.Value) (bool, error) {
	switch i.Kind() {
	case reflect.String:
		return naturalLess(i.String(), j.String()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return i.Int() < j.Int(), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return i.Uint() < j.Uint(), nil
	case reflect.Float32, reflect.Float64:
		return i.Float() < j.Float(), nil
	case reflect.Bool:
		return !i.Bool(), nil
	case reflect.Array, reflect.Slice:
		for idx := 0; idx < min(i.Len(), j.Len()); idx++ {
			less, err := isLess(i.Index(idx), j.Index(idx))
			if err != nil || !less {
				return less, err
			}
		}
		return true, nil
	case reflect.Interface:
		if i.IsNil() && j.IsNil() {
			return false, nil
		} else if i.IsNil() {
			return true, nil
		} else if j.IsNil() {
			return false, nil
		}
		switch it := i.Interface().(type) {
		case int64:
			if jt, ok := j.Interface().(int64); ok {
				return it < jt, nil
			}
			if jt, ok := j.Interface().(float64); ok {
				return float64(it) < jt, nil
			}
		case float64:
			if jt, ok := j.Interface().(float64); ok {
				return it < jt, nil
			}
			if jt, ok := j.Interface().(int64); ok {
				return it < float64(jt), nil
			}
		case bool:
			if _, ok := j.Interface().(bool); ok {
				return !it, nil
			}
		case string:
			if jt, ok := j.Interface().(string); ok {
				return stringLess(it, jt), nil
			}
		default:
			return false, fmt.Errorf("unsortable type: %T", it)
		}
		return false, nil
	default:
		return false, fmt.Errorf("unsortable type: %v", i.Kind())
	}
}

// stringLess: times as times, quantities as quantities, else natural order.
func stringLess(a, b string) bool {
	if ta, err := time.Parse(time.RFC3339Nano, a); err == nil {
		if tb, err := time.Parse(time.RFC3339Nano, b); err == nil {
			return ta.Before(tb)
		}
	}
	if qa, err := resource.ParseQuantity(a); err == nil {
		if qb, err := resource.ParseQuantity(b); err == nil {
			return qa.Cmp(qb) < 0
		}
	}
	return naturalLess(a, b)
}

// naturalLess compares strings with their runs of digits as numbers
// ("web-2" before "web-10"), as kubectl's sortorder.NaturalLess does.
func naturalLess(a, b string) bool {
	isDigit := func(c byte) bool { return '0' <= c && c <= '9' }
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if !isDigit(ca) || !isDigit(cb) {
			if ca != cb {
				return ca < cb
			}
			i++
			j++
			continue
		}
		// Both at a run of digits: skip leading zeros, compare lengths,
		// then digits; equal values with more leading zeros come later.
		si, sj := i, j
		for i < len(a) && a[i] == '0' {
			i++
		}
		for j < len(b) && b[j] == '0' {
			j++
		}
		ni, nj := i, j
		for i < len(a) && isDigit(a[i]) {
			i++
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
		da, db := a[ni:i], b[nj:j]
		if len(da) != len(db) {
			return len(da) < len(db)
		}
		if da != db {
			return da < db
		}
		if za, zb := ni-si, nj-sj; za != zb {
			return za < zb
		}
	}
	return len(a)-i < len(b)-j
}
