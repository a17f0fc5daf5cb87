package jobgate

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Cluster is the TerraformCluster a TerraformMachine or TerraformMachinePool
// inherits its defaults from, found as CAPTF's owner lookup finds it
// (internal/controllers/shared/dependencies.go LookupCluster and
// lookupOrphanedCluster, at 0454c6c56e647751e8251185a18712f0d3530c78):
// through the object's cluster.x-k8s.io/cluster-name label to the CAPI
// Cluster, then the Cluster's spec.infrastructureRef; when the Cluster is
// gone, the only TerraformCluster labelled with that cluster name. It is
// read by the caller; nothing here reads.
type Cluster struct {
	// Read is true when the lookup went as CAPTF's would; false when the
	// plugin could not read what CAPTF reads (Why says what), and the
	// inherited values are then unknown.
	Read bool
	// Why says how the TerraformCluster was found, why there is none, or
	// why the lookup could not be made.
	Why string
	// Object is the TerraformCluster; nil when CAPTF finds none.
	Object *unstructured.Unstructured
	// Name is the TerraformCluster the Cluster's spec.infrastructureRef
	// names, in the object's namespace, whether it exists or not: the
	// one whose creation changes what the object inherits.
	Name string
	// NotTerraform is set when the Cluster's infrastructureRef names
	// another kind: CAPTF's ClusterNotTerraform owner gate.
	NotTerraform string
}

// name is the TerraformCluster's "terraformcluster/<name>".
func (c Cluster) name() string {
	if c.Object == nil {
		return "no TerraformCluster"
	}
	return "terraformcluster/" + c.Object.GetName()
}

// Value is one effective setting: its value, where it comes from, and
// whether it is known at all.
type Value struct {
	// N is the value in seconds (for intervals, 0 is "disabled").
	N int64
	// S is the value of a string setting (the deletion policy).
	S string
	// From says where the value comes from.
	From string
	// Known is false when it depends on what could not be read (From
	// then says what).
	Known bool
}

func known(n int64, s, from string) Value { return Value{N: n, S: s, From: from, Known: true} }

// Effective is an object's configuration after inheritance, as CAPTF's
// Resolve computes it (internal/controllers/shared/effective.go at
// 3655ed0dc8390b73bfc3669fc3bed2459d11dcaa), for what decides whether a
// Job starts.
type Effective struct {
	// Drift is the drift interval in seconds: 0 disables drift checks;
	// DefaultDrift (-1) is the manager's --drift-default-interval, which
	// the manager requires to be positive (cmd/manager/app/options/
	// options.go Validate, at 1df390d07e70a8c27f620b6d1233dfda42835e02).
	Drift Value
	// Health is a TerraformMachine's health-check refresh interval in
	// seconds while remediation.annotateMachine is true, else 0.
	Health Value
	// Membership is a TerraformMachinePool's membership refresh interval
	// in seconds; 0 for the other kinds.
	Membership Value
	// LockTimeout and Deadline are the effective Job policy's
	// lockTimeoutSeconds and activeDeadlineSeconds, built-in defaults
	// applied (internal/jobs/spec.go: 300 and 3600).
	LockTimeout, Deadline Value
	// Policy is the deletion policy: Destroy, Retain, or "" when it is
	// inherited from a TerraformCluster CAPTF cannot find (it then never
	// assumes Destroy: DeletionPolicyUnresolved).
	Policy Value
}

// DefaultDrift stands for the manager's --drift-default-interval.
const DefaultDrift = -1

// Built-in defaults CAPTF applies.
const (
	DefaultHealthCheckSeconds = 300  // effective.go DefaultHealthCheckInterval
	DefaultMembershipSeconds  = 60   // effective.go DefaultMembershipRefreshInterval
	DefaultLockTimeoutSeconds = 300  // internal/jobs/spec.go DefaultLockTimeoutSeconds
	DefaultDeadlineSeconds    = 3600 // internal/jobs/spec.go DefaultActiveDeadlineSeconds
)

// inherits is true for the kinds that inherit a TerraformCluster's
// spec.defaults (SpecView.InheritsDefaults).
func inherits(kind string) bool { return kind == "TerraformMachine" || kind == "TerraformMachinePool" }

// field reads an integer field: its value and whether it is set.
func field(u *unstructured.Unstructured, path ...string) (int64, bool) {
	if u == nil {
		return 0, false
	}
	v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	switch n := v.(type) {
	case int64:
		return n, ok
	case float64:
		return int64(n), ok
	case int:
		return int64(n), ok
	}
	return 0, false
}

func str(u *unstructured.Unstructured, path ...string) string {
	if u == nil {
		return ""
	}
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

func boolean(u *unstructured.Unstructured, path ...string) (bool, bool) {
	if u == nil {
		return false, false
	}
	b, ok, _ := unstructured.NestedBool(u.Object, path...)
	return b, ok
}

func path(p ...string) string { return strings.Join(p, ".") }

// Resolve computes the object's effective configuration from it and, for
// a kind that inherits, the TerraformCluster c: a field the object sets
// wins; else, for a machine or pool, the cluster's spec.defaults, then
// the cluster's own field of that name (clusterInherited); else the
// built-in default. A TerraformCluster uses only its own fields.
func Resolve(kind string, u *unstructured.Unstructured, c Cluster) Effective {
	var e Effective
	in := inherits(kind)
	tc := c.Object
	cl := c.name()
	unread := Value{From: "inherited from a TerraformCluster that could not be read (" + c.Why + ")"}
	// pick returns the first set integer of own, then (inheriting) the
	// cluster's paths; positive keeps only values > 0 (the fields whose 0
	// means unset).
	pick := func(positive bool, own []string, inherited ...[]string) (Value, bool) {
		set := func(n int64, ok bool) bool { return ok && (!positive || n > 0) }
		if n, ok := field(u, own...); set(n, ok) {
			return known(n, "", path(own...)), true
		}
		if !in {
			return Value{}, false
		}
		if !c.Read {
			return unread, true
		}
		for _, p := range inherited {
			if n, ok := field(tc, p...); set(n, ok) {
				return known(n, "", cl+" "+path(p...)), true
			}
		}
		return Value{}, false
	}

	// Drift.
	switch kind {
	case "TerraformMachinePool":
		// resolvePool: the pool's own interval when > 0, else an inherited
		// one when > 0, else the manager's: never disabled.
		// The inherited interval is the first set (0 included) of the
		// cluster's defaults.drift and spec.drift, used only when > 0.
		var v Value
		n, ok := field(u, "spec", "drift", "intervalSeconds")
		if ok = ok && n > 0; ok {
			v = known(n, "", "spec.drift.intervalSeconds")
		} else if c.Read {
			for _, p := range [][]string{{"spec", "defaults", "drift", "intervalSeconds"}, {"spec", "drift", "intervalSeconds"}} {
				if n, set := field(tc, p...); set {
					v, ok = known(n, "", cl+" "+path(p...)), n > 0
					break
				}
			}
		}
		switch {
		case !ok && !c.Read:
			// Whatever it inherits, a pool's drift stays on.
			v = Value{N: DefaultDrift, From: "spec.defaults.drift of a TerraformCluster that could not be read, else --drift-default-interval: a pool's drift is never disabled", Known: true}
		case !ok:
			v = known(DefaultDrift, "", "--drift-default-interval")
		}
		e.Drift = v
		m, ok := pick(true, []string{"spec", "membershipRefreshIntervalSeconds"}, []string{"spec", "defaults", "membershipRefreshIntervalSeconds"})
		switch {
		case !ok:
			m = known(DefaultMembershipSeconds, "", "the built-in default")
		case !m.Known:
			// Inherited or not, the interval is positive (at least 15 s).
			m = Value{N: DefaultMembershipSeconds, From: "spec.defaults.membershipRefreshIntervalSeconds of a TerraformCluster that could not be read (15 s to a day), else 60 s", Known: true}
		}
		e.Membership = m
	default:
		// A TerraformCluster: its own spec.drift only. A TerraformMachine:
		// MergeMachineDriftPolicy, the first set intervalSeconds, 0
		// included, of its own, the cluster's defaults.drift, the
		// cluster's spec.drift.
		v, ok := pick(false, []string{"spec", "drift", "intervalSeconds"},
			[]string{"spec", "defaults", "drift", "intervalSeconds"}, []string{"spec", "drift", "intervalSeconds"})
		if !ok {
			v = known(DefaultDrift, "", "--drift-default-interval")
		}
		e.Drift = v
	}

	// Remediation: a TerraformMachine only (MergeRemediation).
	if kind == "TerraformMachine" {
		e.Health = known(0, "", "remediation.annotateMachine is not set")
		annotate, set := boolean(u, "spec", "remediation", "annotateMachine")
		from := "spec.remediation.annotateMachine"
		if !set {
			switch {
			case !c.Read:
				e.Health = Value{From: "remediation.annotateMachine " + unread.From}
			default:
				annotate, set = boolean(tc, "spec", "defaults", "remediation", "annotateMachine")
				from = cl + " spec.defaults.remediation.annotateMachine"
			}
		}
		if set && !annotate {
			e.Health = known(0, "", from+" is false")
		}
		if set && annotate {
			v, ok := pick(true, []string{"spec", "remediation", "healthCheckIntervalSeconds"}, []string{"spec", "defaults", "remediation", "healthCheckIntervalSeconds"})
			switch {
			case !ok:
				e.Health = known(DefaultHealthCheckSeconds, "", from+" is true, at the default interval")
			case !v.Known:
				// annotateMachine is on; only the interval is unknown.
				e.Health = Value{N: DefaultHealthCheckSeconds, From: from + " is true; its interval is " + unread.From, Known: true}
			default:
				e.Health = known(v.N, "", from+" is true, interval from "+v.From)
			}
		}
	}

	// Job policy: MergeJobPolicy, lockTimeoutSeconds the first set,
	// activeDeadlineSeconds the first non-zero.
	lt, ok := pick(false, []string{"spec", "jobs", "lockTimeoutSeconds"},
		[]string{"spec", "defaults", "jobs", "lockTimeoutSeconds"}, []string{"spec", "jobs", "lockTimeoutSeconds"})
	if !ok {
		lt = known(DefaultLockTimeoutSeconds, "", "the built-in default")
	}
	e.LockTimeout = lt
	dl, ok := pick(true, []string{"spec", "jobs", "activeDeadlineSeconds"},
		[]string{"spec", "defaults", "jobs", "activeDeadlineSeconds"}, []string{"spec", "jobs", "activeDeadlineSeconds"})
	if !ok {
		dl = known(DefaultDeadlineSeconds, "", "the built-in default")
	}
	e.Deadline = dl

	// Deletion policy.
	own := str(u, "spec", "deletionPolicy")
	switch {
	case own != "":
		e.Policy = known(0, own, "spec.deletionPolicy")
	case !in:
		e.Policy = known(0, "Destroy", "the default (a TerraformCluster sets none)")
	case !c.Read:
		e.Policy = Value{From: "inherited from a TerraformCluster that could not be read (" + c.Why + ")"}
	case tc == nil:
		e.Policy = known(0, "", "no spec.deletionPolicy, and CAPTF finds no TerraformCluster to inherit one from ("+c.Why+")")
	case str(tc, "spec", "defaults", "deletionPolicy") != "":
		e.Policy = known(0, str(tc, "spec", "defaults", "deletionPolicy"), cl+" spec.defaults.deletionPolicy")
	case str(tc, "spec", "deletionPolicy") != "":
		e.Policy = known(0, str(tc, "spec", "deletionPolicy"), cl+" spec.deletionPolicy")
	default:
		e.Policy = known(0, "Destroy", "the default (neither the object nor "+cl+" sets one)")
	}
	return e
}

// PolicyInvalid says whether the effective Job policy is one CAPTF
// refuses to start a Job with (ValidateEffectiveJobPolicy: the lock
// timeout must be below the deadline), and why; known is false when a
// value could not be read.
func (e Effective) PolicyInvalid() (invalid, known bool, why string) {
	if !e.LockTimeout.Known {
		return false, false, "lockTimeoutSeconds is " + e.LockTimeout.From
	}
	if !e.Deadline.Known {
		return false, false, "activeDeadlineSeconds is " + e.Deadline.From
	}
	return e.LockTimeout.N >= e.Deadline.N, true, fmt.Sprintf("lockTimeoutSeconds %d (%s) is not below activeDeadlineSeconds %d (%s)",
		e.LockTimeout.N, e.LockTimeout.From, e.Deadline.N, e.Deadline.From)
}

// every says an interval for a reader.
func every(v Value) string {
	if v.N == DefaultDrift {
		return "every --drift-default-interval, 30 min by default"
	}
	return "every " + strconv.FormatInt(v.N, 10) + " s"
}
