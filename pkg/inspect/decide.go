package inspect

import (
	"runtime"
	"slices"
	"sync"

	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// Decide gives every lock of the snapshot its verdict, by Classify, and
// what the snapshot says around it (the owner's gates, the active Job, how
// a Stale lock's runner ended), in the order a reader scans them. It reads
// nothing: the same snapshot always gives the same report.
func Decide(s *Snapshot) *Report {
	d := newDecider(s)
	rep := &Report{Warnings: s.Warnings, Results: make([]Result, len(s.Leases))}
	// The locks are decided independently, from indexes only read: in
	// chunks, one goroutine each, on every core (the reads are over, the
	// cores idle).
	chunk := max(256, (len(s.Leases)+runtime.GOMAXPROCS(0)-1)/runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for lo := 0; lo < len(s.Leases); lo += chunk {
		hi := min(lo+chunk, len(s.Leases))
		wg.Go(func() {
			for n := lo; n < hi; n++ {
				rep.Results[n] = d.result(s.Leases[n])
			}
		})
	}
	wg.Wait()
	sortResults(rep.Results)
	return rep
}

// sortResults sorts rs stably by before, moving each Result (over 600
// bytes) at most once: sort.SliceStable moved each many times. It sorts
// their indexes, then applies the permutation in place, cycle by cycle.
func sortResults(rs []Result) {
	order := make([]int32, len(rs))
	for n := range order {
		order[n] = int32(n)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		switch {
		case rs[a].Facts.before(&rs[b].Facts):
			return -1
		case rs[b].Facts.before(&rs[a].Facts):
			return 1
		}
		return 0
	})
	// rs[n] becomes the old rs[order[n]].
	for n := range order {
		if order[n] < 0 {
			continue
		}
		tmp := rs[n]
		at := n
		for {
			from := int(order[at])
			order[at] = -1
			if from == n {
				rs[at] = tmp
				break
			}
			rs[at] = rs[from]
			at = from
		}
	}
}

// DecideLock gives the lock of the snapshot named namespace/name its
// verdict, as Decide does; ok is false when the snapshot has no such
// lock.
func DecideLock(s *Snapshot, namespace, name string) (Result, bool) {
	return NewDecider(s).Lock(s, namespace, name)
}

// Decider decides the locks of one snapshot one at a time, and again as
// their Lease and holder pod are read anew (Reader.Refresh), from the
// indexes it builds once: unlock --all-stale decides each of its
// candidates twice, and rebuilding the owner and Job indexes for each
// would make it quadratic in the locks.
type Decider struct{ d *decider }

// NewDecider indexes s.
func NewDecider(s *Snapshot) *Decider { return &Decider{d: newDecider(s)} }

// Lock decides the lock namespace/name of s, which is the snapshot the
// Decider was made from, or one that differs from it only in its Leases,
// Sources, Pods and Warnings (Reader.Refresh's); ok is false when s has no
// such lock. It decides as Decide and DecideLock do.
func (x *Decider) Lock(s *Snapshot, namespace, name string) (Result, bool) {
	for _, l := range s.Leases {
		if l.Namespace == namespace && l.Name == name {
			d := *x.d
			d.s = s
			return d.result(l), true
		}
	}
	return Result{}, false
}

// decider holds the indexes of one snapshot.
type decider struct {
	s      *Snapshot
	owners *owners
	jobs   jobIndex
	// listed is true when every CAPTF kind was listed; occupied are the
	// namespaces where one has an object.
	listed   bool
	occupied map[string]bool
}

func newDecider(s *Snapshot) *decider {
	lists := make([]KindList, 0, len(s.Kinds))
	for _, k := range object.Kinds {
		if l, ok := s.Kinds[k.Name]; ok {
			lists = append(lists, l)
		}
	}
	d := &decider{s: s, owners: newOwners(lists), jobs: indexJobs(s.Jobs), listed: len(lists) == len(object.Kinds), occupied: map[string]bool{}}
	for _, l := range lists {
		d.listed = d.listed && l.Served && l.Err == nil
		for ref := range l.Objects {
			d.occupied[ref.Namespace] = true
		}
	}
	return d
}

// result decides one lock.
func (d *decider) result(l Lease) Result {
	s := d.s
	f := Facts{Lease: l, NamespaceEmpty: d.listed && !d.occupied[l.Namespace]}
	var warnings []string
	f.Owner, f.NoOwnerWhy, warnings = d.owners.resolve(l)
	f.Warnings = append(append([]string(nil), l.Warnings...), warnings...)
	if host, ok := HolderPod(l); ok {
		f.Pod = s.Pods[Key(l.Namespace, host)]
	}
	var obj = s.Objects[ownerRef(f.Owner)]
	if obj != nil {
		env := d.jobEnv(f.Owner)
		if cl, ok := s.Clusters[f.Owner.Ref]; ok {
			env.Cluster = cl
		} else {
			// No owner of its kind: CAPTF's owner lookup never reaches
			// the TerraformCluster (shared/owner.go ResolveOwner).
			env.Cluster = jobgate.Cluster{Read: true, Why: "CAPTF looks a TerraformCluster up only for an object with a " + jobgate.OwnerKind(f.Owner.Ref.Kind.Name) + " owner"}
		}
		key := f.Owner.Ref.Namespace + "/" + f.Owner.Ref.Suffix()
		env.Records = s.Records[key] // unread when missing
		if st, ok := s.States[key]; ok {
			env.State, env.StateWhy = st.Presence, st.Why
			if st.Presence != jobgate.Unread && ReadsStateSecrets(obj) {
				if st.Presence == jobgate.Present {
					env.ChunkReason, env.ChunkWhy = jobgate.ChunkSet(st.Secrets, f.Owner.Ref.Suffix())
				}
				fails := jobgate.ReadFails(obj, st.Secrets, env.ChunkReason)
				env.RetainedFrom, env.RetainedIn = jobgate.RetainedFrom(st.Secrets, env.Records, string(obj.GetUID()), fails)
			}
		}
		if ns, ok := s.Namespaces[f.Owner.Ref.Namespace]; ok {
			env.NamespaceDeleting, env.NamespaceWhy = ns.Presence, ns.Why
		}
		if env.JobsRead {
			env.UnbookkeptApply = jobgate.Absent
			if UnbookkeptApply(ownJobs(d.jobs.of(f.Owner.Ref), f.Owner.Ref, f.Owner.UID), obj) {
				env.UnbookkeptApply = jobgate.Present
			}
		}
		g := jobgate.Of(f.Owner.Ref.Kind.Name, obj, env)
		f.Gate = &g
		f.Runtime = RuntimeOf(f.Owner.Ref, obj, s.States[key])
		if env.JobsRead {
			f.Runtime.Tried = d.tried(l, f.Owner)
		}
	}
	r := Result{Facts: f, Decision: Classify(f), Object: obj, Source: s.Sources[Key(l.Namespace, l.Name)]}
	r.Death = Death(r, d.jobs.named, s.JobsErr == nil)
	r.Unreadable = d.owners.unreadable(f.Owner)
	if f.Runtime.StateSecrets == jobgate.Unread && f.Runtime.ListWhy != "" {
		// Asked for and refused (the read-only role does not grant
		// it): the runtime checks that need them were skipped (review26g
		// F10), which the reason says where it claims a clear.
		r.Unreadable = append(r.Unreadable, "secrets")
	}
	if s.JobsErr != nil {
		r.Unreadable = append(r.Unreadable, "jobs")
	} else if f.Owner != nil {
		r.ActiveJob = ActiveJob(d.jobs.of(f.Owner.Ref), f.Owner.Ref, f.Owner.UID)
	}
	return r
}

// tried is the Job of the owner o that CAPTF created to force-unlock the
// lock l and that failed, the lock still held (triedJob); nil for none.
func (d *decider) tried(l Lease, o *Owner) *TriedJob {
	return triedJob(ownJobs(d.jobs.of(o.Ref), o.Ref, o.UID), CAPTFID(l))
}

// ownerRef is an existing owner's reference, the zero Ref for none.
func ownerRef(o *Owner) object.Ref {
	if o == nil || o.Exists == nil || !*o.Exists {
		return object.Ref{}
	}
	return o.Ref
}

// jobEnv is what the gates read of an owner's Jobs.
func (d *decider) jobEnv(o *Owner) jobgate.Env {
	switch {
	case d.s.JobsErr != nil:
		return jobgate.Env{JobsWhy: "the Jobs could not be listed"}
	case o.UID == "":
		return jobgate.Env{JobsWhy: "the object's uid is not known, so its Jobs cannot be told from an earlier object's"}
	}
	active, destroyed, lastApply := jobFacts(ownJobs(d.jobs.of(o.Ref), o.Ref, o.UID))
	return jobgate.Env{JobsRead: true, ActiveJob: active, DestroySucceeded: destroyed, LastApplySucceeded: lastApply}
}

// before orders results as a reader scans them: by namespace, then by
// object (kind, then name; locks of no object last), then by Lease name,
// which is a hash and says nothing to a reader.
func (r Result) before(o Result) bool { return r.Facts.before(&o.Facts) }

// before is Result.before on the Facts, by pointer: no copy of either.
func (r *Facts) before(o *Facts) bool {
	x, y := &r.Lease, &o.Lease
	if x.Namespace != y.Namespace {
		return x.Namespace < y.Namespace
	}
	if a, b := r.Owner, o.Owner; a != nil || b != nil {
		switch {
		case b == nil:
			return true
		case a == nil:
			return false
		case a.Ref.Kind.Name != b.Ref.Kind.Name:
			return a.Ref.Kind.Name < b.Ref.Kind.Name
		case a.Ref.Name != b.Ref.Name:
			return a.Ref.Name < b.Ref.Name
		}
	}
	return x.Name < y.Name
}
