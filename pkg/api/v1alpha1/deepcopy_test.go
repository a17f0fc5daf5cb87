package v1alpha1

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

// The types that print through cli-runtime's printers.
var (
	_ runtime.Object = &Lock{}
	_ runtime.Object = &LockList{}
	_ runtime.Object = &Explanation{}
	_ runtime.Object = &UnlockResult{}
	_ runtime.Object = &UnlockResultList{}
)

// deepCopyTypes is every struct type of the package, as a new zero value.
// TestDeepCopyTypesAreAll fails when a struct type is missing from it.
var deepCopyTypes = []any{
	new(ActiveJob),
	new(Advice),
	new(Condition),
	new(Context),
	new(ContextError),
	new(Death),
	new(EventSummary),
	new(Explanation),
	new(Holder),
	new(LeaseChange),
	new(LeaseDeletion),
	new(Lock),
	new(LockInfo),
	new(LockList),
	new(ObjectRef),
	new(RunLease),
	new(Step),
	new(UnlockResult),
	new(UnlockResultList),
}

// runtimeObjects are the types that implement runtime.Object.
var runtimeObjects = []string{"Explanation", "Lock", "LockList", "UnlockResult", "UnlockResultList"}

// TestDeepCopyTypesAreAll reads the package's Go files, so that a new
// struct type cannot escape TestDeepCopySharesNothing.
func TestDeepCopyTypesAreAll(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, f := range pkgs["v1alpha1"].Files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				if ts := s.(*ast.TypeSpec); ts.Name.IsExported() {
					if _, ok := ts.Type.(*ast.StructType); ok {
						declared = append(declared, ts.Name.Name)
					}
				}
			}
		}
	}
	var listed, objects []string
	for _, v := range deepCopyTypes {
		listed = append(listed, reflect.TypeOf(v).Elem().Name())
		if _, ok := v.(runtime.Object); ok {
			objects = append(objects, reflect.TypeOf(v).Elem().Name())
		}
	}
	slices.Sort(declared)
	slices.Sort(listed)
	if !slices.Equal(declared, listed) {
		t.Errorf("struct types declared %v, listed in deepCopyTypes %v", declared, listed)
	}
	slices.Sort(objects)
	if !slices.Equal(objects, runtimeObjects) {
		t.Errorf("runtime.Objects are %v, want %v", objects, runtimeObjects)
	}
}

// TestDeepCopySharesNothing fills every field of every type (pointers
// set, slices of two, maps of one), copies it each way the package offers,
// changes every value the copy reaches, and checks the original unchanged.
func TestDeepCopySharesNothing(t *testing.T) {
	for _, zero := range deepCopyTypes {
		typ := reflect.TypeOf(zero).Elem()
		copies := map[string]func(in reflect.Value) reflect.Value{
			"DeepCopy": func(in reflect.Value) reflect.Value {
				return in.MethodByName("DeepCopy").Call(nil)[0]
			},
			"DeepCopyInto": func(in reflect.Value) reflect.Value {
				out := reflect.New(typ)
				in.MethodByName("DeepCopyInto").Call([]reflect.Value{out})
				return out
			},
		}
		if _, ok := zero.(runtime.Object); ok {
			copies["DeepCopyObject"] = func(in reflect.Value) reflect.Value {
				return reflect.ValueOf(in.Interface().(runtime.Object).DeepCopyObject())
			}
		}
		for _, how := range slices.Sorted(maps.Keys(copies)) {
			t.Run(typ.Name()+"/"+how, func(t *testing.T) {
				in, want := reflect.New(typ), reflect.New(typ)
				fill(t, in.Elem(), new(int), typ.Name())
				fill(t, want.Elem(), new(int), typ.Name())
				out := copies[how](in)
				if out.Type() != in.Type() {
					t.Fatalf("copy is a %s, want %s", out.Type(), in.Type())
				}
				if out.Pointer() == in.Pointer() {
					t.Fatal("copy is the original")
				}
				if !reflect.DeepEqual(out.Interface(), in.Interface()) {
					t.Fatalf("copy differs from the original:\n%+v\n%+v", out.Elem(), in.Elem())
				}
				mutate(out.Elem())
				if reflect.DeepEqual(out.Interface(), in.Interface()) {
					t.Fatal("mutate changed nothing")
				}
				if d := diff(in.Elem(), want.Elem(), typ.Name()); d != "" {
					t.Errorf("changing the copy changed the original: %s", d)
				}
			})
		}
	}
}

// TestDeepCopyDeath is issue 12's case: a copy's runner death is its own.
func TestDeepCopyDeath(t *testing.T) {
	code, signal, finished := int32(137), int32(9), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	orig := &Lock{Holder: &Holder{Host: "runner", Death: &Death{
		Summary: "container runner OOMKilled (exit 137)", ExitCode: &code, Signal: &signal, FinishedAt: &finished}}}
	for name, c := range map[string]*Lock{
		"DeepCopy":       orig.DeepCopy(),
		"DeepCopyObject": orig.DeepCopyObject().(*Lock),
	} {
		d := c.Holder.Death
		*d.ExitCode, *d.Signal, *d.FinishedAt = 1, 15, finished.Add(time.Hour)
		got := orig.Holder.Death
		if *got.ExitCode != 137 || *got.Signal != 9 || !got.FinishedAt.Equal(finished) {
			t.Errorf("%s: changing the copy's death changed the original's: exit %d signal %d finished %v",
				name, *got.ExitCode, *got.Signal, got.FinishedAt)
		}
	}
}

var timeType = reflect.TypeOf(time.Time{})

// fill sets every exported field that v reaches to a value other than its
// zero, numbering the values from *n so that two fills are equal.
func fill(t *testing.T, v reflect.Value, n *int, path string) {
	t.Helper()
	*n++
	if v.Type() == timeType {
		v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, *n, time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(t, p.Elem(), n, path)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				fill(t, v.Field(i), n, path+"."+f.Name)
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range s.Len() {
			fill(t, s.Index(i), n, fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(s)
	case reflect.Map:
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(t, k, n, path+"[key]")
		fill(t, e, n, path+"[value]")
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString(fmt.Sprint("s", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n))
	default:
		t.Fatalf("%s: fill does not know a %s", path, v.Type())
	}
}

// mutate changes every value that v reaches in place: through pointers,
// slice elements and map entries, and adds an entry to every map.
func mutate(v reflect.Value) {
	if v.Type() == timeType {
		v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Hour)))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			mutate(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				mutate(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			mutate(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			mutate(e)
			v.SetMapIndex(k, e)
		}
		k := reflect.New(v.Type().Key()).Elem()
		k.Set(v.MapKeys()[0])
		mutate(k)
		v.SetMapIndex(k, v.MapIndex(v.MapKeys()[0]))
	case reflect.String:
		v.SetString(v.String() + "!")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() + 1)
	}
}

// diff names the first value that differs between a and b, of one type,
// or returns "".
func diff(a, b reflect.Value, path string) string {
	if a.Type() == timeType || reflect.DeepEqual(a.Interface(), b.Interface()) {
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return fmt.Sprintf("%s is %v, was %v", path, a, b)
		}
		return ""
	}
	switch a.Kind() {
	case reflect.Pointer:
		if !a.IsNil() && !b.IsNil() {
			return diff(a.Elem(), b.Elem(), path)
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if f := a.Type().Field(i); f.IsExported() {
				if d := diff(a.Field(i), b.Field(i), path+"."+f.Name); d != "" {
					return d
				}
			}
		}
	case reflect.Slice:
		for i := range min(a.Len(), b.Len()) {
			if d := diff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
	}
	return fmt.Sprintf("%s is %v, was %v", path, a, b)
}
