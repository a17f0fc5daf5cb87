package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// What the gates read around an owner: the TerraformCluster a machine or
// pool inherits its defaults from, found as CAPTF's owner lookup finds it;
// for a deleting object, whether it has state, its inputs records and
// state backups, and for a live one whether it has state (Secrets'
// metadata only, never their data); and whether its namespace is being
// deleted. Each is read by name or selector for up
// to gateGets objects, else in one list, so that the requests do not grow
// with the locks.

// ClusterGVR is Cluster API's Cluster, in the version CAPTF v0.1.x reads
// (sigs.k8s.io/cluster-api/api/core/v1beta2).
var ClusterGVR = schema.GroupVersionResource{Group: jobgate.CAPIGroup, Version: "v1beta2", Resource: "clusters"}

var (
	secretsGVR    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// readEnv reads into snap what the gates of its objects read in full
// depend on around them: for each TerraformMachine and TerraformMachinePool
// with an owner of its kind, the TerraformCluster CAPTF's owner lookup
// finds; for each object being deleted, whether it has state and its
// records; for each live one (the owner of a held lock) whose state
// CAPTF last read (inspect.ReadsStateSecrets), whether it has state; for
// each, whether its namespace is being deleted.
func (r *Reader) readEnv(ctx context.Context, namespace string, snap *inspect.Snapshot) {
	var lookups, deleting, kept []object.Ref
	for ref, u := range snap.Objects {
		if ref.Kind != object.TerraformCluster && jobgate.HasOwnerRef(ref.Kind.Name, u) {
			lookups = append(lookups, ref)
		}
		switch {
		case u.GetDeletionTimestamp() != nil:
			deleting = append(deleting, ref)
		case inspect.ReadsStateSecrets(u):
			// A live object is kept in full only as the owner of a held
			// lock: whether its state Secret still exists decides whether
			// its next Job's init can clear that lock.
			kept = append(kept, ref)
		}
	}
	var warnings []string
	var wg sync.WaitGroup
	wg.Go(func() { snap.Clusters, warnings = r.lookupClusters(ctx, namespace, lookups, snap.Objects) })
	wg.Go(func() { snap.States, snap.Records = r.readSecrets(ctx, namespace, deleting, kept) })
	// The namespace of every object kept: a terminating namespace stops
	// the Jobs of a live object too, and Read and ReadLock keep the same
	// objects, so they decide alike.
	all := make([]object.Ref, 0, len(snap.Objects))
	for ref := range snap.Objects {
		all = append(all, ref)
	}
	wg.Go(func() { snap.Namespaces = r.readNamespaces(ctx, all) })
	wg.Wait()
	snap.Warnings = append(snap.Warnings, warnings...)
}

// nsName is a namespaced name.
type nsName struct{ namespace, name string }

// lookupClusters finds, for each machine or pool of need, its
// TerraformCluster as CAPTF's LookupCluster does
// (internal/controllers/shared/dependencies.go, at
// 0454c6c56e647751e8251185a18712f0d3530c78): the Cluster named by its
// cluster.x-k8s.io/cluster-name label, that Cluster's
// spec.infrastructureRef, the TerraformCluster it names; when the
// Cluster is gone, the only TerraformCluster labelled with its name
// (lookupOrphanedCluster). What cannot be read is said in the result and
// in one warning.
func (r *Reader) lookupClusters(ctx context.Context, namespace string, need []object.Ref, objs map[object.Ref]*unstructured.Unstructured) (map[object.Ref]jobgate.Cluster, []string) {
	out := map[object.Ref]jobgate.Cluster{}
	want := map[object.Ref]nsName{}
	var names []nsName
	for _, f := range need {
		u := objs[f]
		name := u.GetLabels()[jobgate.ClusterNameLabel]
		if name == "" {
			out[f] = jobgate.Cluster{Read: true, Why: "it has no " + jobgate.ClusterNameLabel + " label"}
			continue
		}
		k := nsName{u.GetNamespace(), name}
		if _, dup := indexOf(names, k); !dup {
			names = append(names, k)
		}
		want[f] = k
	}
	if len(names) == 0 {
		return out, nil
	}
	clusters := r.readNamed(ctx, namespace, ClusterGVR, "clusters."+jobgate.CAPIGroup, names)
	// The TerraformClusters to read: by name, or by label for a gone Cluster.
	tcs := map[nsName]string{}
	var byName, byLabel []nsName
	for _, k := range names {
		c := clusters[k]
		if c.err != nil || c.obj == nil {
			if c.err == nil {
				byLabel = append(byLabel, k)
			}
			continue
		}
		g, kind, name := infrastructureRef(c.obj)
		switch {
		case name == "":
			tcs[k] = "Cluster " + k.name + "'s spec.infrastructureRef names no object yet"
		case g != object.Group || kind != object.TerraformCluster.Name:
			tcs[k] = fmt.Sprintf("Cluster %s uses infrastructure %s %s, not a TerraformCluster", k.name, g, kind)
		default:
			if _, dup := indexOf(byName, nsName{k.namespace, name}); !dup {
				byName = append(byName, nsName{k.namespace, name})
			}
		}
	}
	named, labelled, tcErr := r.readTerraformClusters(ctx, namespace, byName, byLabel)
	var errs []error
	for f, k := range want {
		c := clusters[k]
		switch {
		case c.err != nil:
			errs = append(errs, c.err)
			out[f] = jobgate.Cluster{Why: "Cluster " + k.name + " could not be read: " + short(c.err)}
		case c.obj == nil:
			// lookupOrphanedCluster.
			switch l := labelled[k]; {
			case tcErr != nil:
				errs = append(errs, tcErr)
				out[f] = jobgate.Cluster{Why: "Cluster " + k.name + " is gone and the TerraformClusters labelled with its name could not be listed: " + short(tcErr)}
			case len(l) == 1:
				out[f] = jobgate.Cluster{Read: true, Object: l[0], Why: fmt.Sprintf("Cluster %s is gone; terraformcluster/%s is the only TerraformCluster labelled %s=%s", k.name, l[0].GetName(), jobgate.ClusterNameLabel, k.name)}
			default:
				out[f] = jobgate.Cluster{Read: true, Why: fmt.Sprintf("Cluster %s is gone and %d TerraformClusters are labelled %s=%s", k.name, len(l), jobgate.ClusterNameLabel, k.name)}
			}
		default:
			if why, ok := tcs[k]; ok {
				cl := jobgate.Cluster{Read: true, Why: why}
				if strings.Contains(why, "not a TerraformCluster") {
					cl.NotTerraform = why
				}
				out[f] = cl
				continue
			}
			_, _, name := infrastructureRef(c.obj)
			switch tc := named[nsName{k.namespace, name}]; {
			case tcErr != nil:
				errs = append(errs, tcErr)
				out[f] = jobgate.Cluster{Name: name, Why: "terraformcluster/" + name + ", which Cluster " + k.name + " names, could not be read: " + short(tcErr)}
			case tc == nil:
				out[f] = jobgate.Cluster{Read: true, Name: name, Why: "terraformcluster/" + name + ", which Cluster " + k.name + " names, does not exist"}
			default:
				out[f] = jobgate.Cluster{Read: true, Object: tc, Name: name, Why: "terraformcluster/" + name + " is Cluster " + k.name + "'s infrastructureRef"}
			}
		}
	}
	if err := firstError(errs); err != nil {
		return out, []string{err.Error() + "; what TerraformMachines and TerraformMachinePools inherit from their TerraformCluster is shown as unknown"}
	}
	return out, nil
}

// read is one object read by name: the object, nil when it does not
// exist, or the error.
type read struct {
	obj *unstructured.Unstructured
	err error
}

// readNamed reads the objects of names, by name for up to gateGets of
// them, concurrently, else in one list of the resource in scope.
func (r *Reader) readNamed(ctx context.Context, namespace string, gvr schema.GroupVersionResource, resource string, names []nsName) map[nsName]read {
	out := map[nsName]read{}
	if len(names) <= gateGets {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, k := range names {
			wg.Go(func() {
				u, err := r.Dynamic.Resource(gvr).Namespace(k.namespace).Get(ctx, k.name, metav1.GetOptions{})
				var got read
				switch {
				case notFoundObject(err, k.name):
				case err != nil:
					got.err = readError("get", resource, k.namespace, err)
				default:
					got.obj = u
				}
				mu.Lock()
				out[k] = got
				mu.Unlock()
			})
		}
		wg.Wait()
		return out
	}
	all, err := r.listFull(ctx, gvr, namespace, "")
	for _, k := range names {
		if err != nil {
			out[k] = read{err: readError("list", resource, namespace, err)}
			continue
		}
		out[k] = read{obj: all[k]}
	}
	return out
}

// readTerraformClusters reads the TerraformClusters of byName, and those
// labelled with each cluster name of byLabel: by name and by label for up
// to gateGets of them in all, else in one list of the kind in scope.
func (r *Reader) readTerraformClusters(ctx context.Context, namespace string, byName, byLabel []nsName) (map[nsName]*unstructured.Unstructured, map[nsName][]*unstructured.Unstructured, error) {
	named, labelled := map[nsName]*unstructured.Unstructured{}, map[nsName][]*unstructured.Unstructured{}
	if len(byName)+len(byLabel) == 0 {
		return named, labelled, nil
	}
	gvr := object.TerraformCluster.GVR()
	resource := object.TerraformCluster.Resource + "." + object.Group
	if len(byName)+len(byLabel) > gateGets {
		all, err := r.listFull(ctx, gvr, namespace, "")
		if err != nil {
			return nil, nil, readError("list", resource, namespace, err)
		}
		for _, k := range byName {
			named[k] = all[k]
		}
		for k, u := range all {
			if c := u.GetLabels()[jobgate.ClusterNameLabel]; c != "" {
				key := nsName{k.namespace, c}
				labelled[key] = append(labelled[key], u)
			}
		}
		return named, labelled, nil
	}
	for k, got := range r.readNamed(ctx, namespace, gvr, resource, byName) {
		if got.err != nil {
			return nil, nil, got.err
		}
		named[k] = got.obj
	}
	for _, k := range byLabel {
		l, err := r.Dynamic.Resource(gvr).Namespace(k.namespace).List(ctx, metav1.ListOptions{LabelSelector: jobgate.ClusterNameLabel + "=" + k.name})
		if err != nil {
			return nil, nil, readError("list", resource, k.namespace, err)
		}
		for n := range l.Items {
			labelled[k] = append(labelled[k], &l.Items[n])
		}
	}
	return named, labelled, nil
}

// listFull lists a resource in full in scope, by namespace and name.
func (r *Reader) listFull(ctx context.Context, gvr schema.GroupVersionResource, namespace, selector string) (map[nsName]*unstructured.Unstructured, error) {
	out := map[nsName]*unstructured.Unstructured{}
	l, err := r.Dynamic.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	for n := range l.Items {
		u := &l.Items[n]
		out[nsName{u.GetNamespace(), u.GetName()}] = u
	}
	return out, nil
}

// infrastructureRef reads a Cluster's spec.infrastructureRef: its group
// (v1beta2's apiGroup, or the group of an apiVersion), kind and name.
func infrastructureRef(u *unstructured.Unstructured) (group, kind, name string) {
	ref, _, _ := unstructured.NestedMap(u.Object, "spec", "infrastructureRef")
	s := func(k string) string { v, _ := ref[k].(string); return v }
	group = s("apiGroup")
	if group == "" {
		if gv, err := schema.ParseGroupVersion(s("apiVersion")); err == nil {
			group = gv.Group
		}
	}
	return group, s("kind"), s("name")
}

// notFoundObject is whether err says that object name does not exist, as
// opposed to its resource not being served, which also answers 404.
func notFoundObject(err error, name string) bool {
	var s apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !asStatus(err, &s) {
		return false
	}
	d := s.Status().Details
	return d != nil && d.Name == name
}

func asStatus(err error, s *apierrors.APIStatus) bool { return errors.As(err, s) }

// short is an error's reason as the API server gives it (Forbidden,
// NotFound, …), or its message.
func short(err error) string {
	if r := apierrors.ReasonForError(err); r != metav1.StatusReasonUnknown {
		return string(r)
	}
	return err.Error()
}

// readSecrets reads, from the Secrets' metadata only (never their data),
// what CAPTF's read of the state reads of them, for each object of refs
// (being deleted) and of live (the owner of a held lock): whether it has
// state (any Secret its state reader lists for it, chunks included:
// jobgate.StateOf), which the runtime's init needs to clear the lock
// (inspect.Runtime.NoState), and its inputs records and state backups
// (jobgate.RecordsOf), which CAPTF's checkRetained reads on every pass,
// live or deleting (retain.go at 665f88bb: a Secret another object
// retained holds it, no Job starts; review26g F3), and a deletion decides
// on. For up to gateGets objects in all, four lists each (by
// jobgate.StateSelector, by jobgate.BackupSelector, and by the name of
// each of its two inputs Secrets; a list by name needs only the list
// right a list by label does); past that, one list of every Secret of
// the namespace when one is deleting, else two: the state Secrets, and
// the other Secrets labelled captf.io/managed=true (an inputs Secret
// restored without CAPTF's labels is then not seen). Without the right to list Secrets, each is unread: no
// warning, as the read-only role does not grant it (docs/rbac.md); the
// decision then falls back to StateReadable.
func (r *Reader) readSecrets(ctx context.Context, namespace string, refs, live []object.Ref) (map[string]inspect.StateRead, map[string]jobgate.Records) {
	states, records := map[string]inspect.StateRead{}, map[string]jobgate.Records{}
	all := append(append([]object.Ref(nil), refs...), live...)
	if len(all) == 0 {
		return states, records
	}
	list := func(ns string, o metav1.ListOptions) ([]metav1.ObjectMeta, error) {
		l, err := r.Metadata.Resource(secretsGVR).Namespace(ns).List(ctx, o)
		if err != nil {
			return nil, err
		}
		out := make([]metav1.ObjectMeta, len(l.Items))
		for n := range l.Items {
			out[n] = l.Items[n].ObjectMeta
		}
		return out, nil
	}
	byName := func(name string) metav1.ListOptions {
		return metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
	}
	// secrets are the Secrets read for each object: all those of its
	// namespace in scope, or those its own lists gave.
	secrets := make([][]metav1.ObjectMeta, len(all))
	errs := make([]error, len(all))
	if len(all) > gateGets {
		// Every Secret when one object is deleting (a deletion's reads
		// reach Secrets of any labels: its inputs by name); else the
		// state Secrets, whatever else they carry, and the Secrets CAPTF
		// labels its own (inputs records and backups carry
		// captf.io/managed=true: inputs.setRecord at bfe694cf, the
		// backups' labels in internal/state), which bounds the list by
		// CAPTF's objects rather than by every Secret of the namespace.
		selectors := []string{""}
		if len(refs) == 0 {
			selectors = []string{jobgate.StateLabel + "=true", jobgate.ManagedLabel + "=true,!" + jobgate.StateLabel}
		}
		var got []metav1.ObjectMeta
		var err error
		for _, sel := range selectors {
			var some []metav1.ObjectMeta
			if some, err = list(namespace, metav1.ListOptions{LabelSelector: sel}); err != nil {
				break
			}
			got = append(got, some...)
		}
		for n := range all {
			secrets[n], errs[n] = got, err
		}
	} else {
		var wg sync.WaitGroup
		for n, ref := range all {
			wg.Go(func() {
				durable, applied := jobgate.InputsSecrets(ref.Kind.Code, ref.Name)
				opts := []metav1.ListOptions{{LabelSelector: jobgate.StateSelector(ref.Suffix())},
					{LabelSelector: jobgate.BackupSelector(ref.Suffix())}, byName(durable), byName(applied)}
				for _, o := range opts {
					got, err := list(ref.Namespace, o)
					if err != nil {
						errs[n] = err
						return
					}
					secrets[n] = append(secrets[n], got...)
				}
			})
		}
		wg.Wait()
	}
	for n, ref := range all {
		key := ref.Namespace + "/" + ref.Suffix()
		if errs[n] != nil {
			why := "its Secrets' metadata could not be listed: " + short(errs[n])
			states[key] = inspect.StateRead{Why: why}
			records[key] = jobgate.Records{Why: why}
			continue
		}
		var mine []metav1.ObjectMeta
		for _, m := range secrets[n] {
			if m.Namespace == ref.Namespace || m.Namespace == "" {
				mine = append(mine, m)
			}
		}
		own := jobgate.StateSecrets(mine, ref.Suffix())
		states[key] = inspect.StateRead{Presence: jobgate.StateOf(own, ref.Suffix()), Secrets: own}
		records[key] = jobgate.RecordsIn(mine, ref.Kind.Code, ref.Name, ref.Suffix())
	}
	return states, records
}

// readNamespaces reads whether the namespace of each object of refs is
// being deleted: by name for up to gateGets namespaces, else in
// one list, from their metadata. Unread, with why, when it cannot be read
// (the role must grant get and list on namespaces).
func (r *Reader) readNamespaces(ctx context.Context, refs []object.Ref) map[string]inspect.StateRead {
	out := map[string]inspect.StateRead{}
	var names []string
	for _, ref := range refs {
		if _, ok := out[ref.Namespace]; !ok {
			out[ref.Namespace] = inspect.StateRead{}
			names = append(names, ref.Namespace)
		}
	}
	if len(names) == 0 {
		return out
	}
	set := func(name string, deleting bool) {
		p := jobgate.Absent
		if deleting {
			p = jobgate.Present
		}
		out[name] = inspect.StateRead{Presence: p}
	}
	fail := func(name string, verb string, err error) {
		out[name] = inspect.StateRead{Why: short(err) + ": the plugin needs " + verb + " on namespaces"}
	}
	if len(names) > gateGets {
		l, err := r.Metadata.Resource(namespacesGVR).List(ctx, metav1.ListOptions{})
		found := map[string]bool{}
		if err == nil {
			for _, m := range l.Items {
				found[m.Name] = m.DeletionTimestamp != nil
			}
		}
		for _, name := range names {
			deleting, listed := found[name]
			switch {
			case err != nil:
				fail(name, "list", err)
			case !listed:
				out[name] = inspect.StateRead{Why: "it was not found"}
			default:
				set(name, deleting)
			}
		}
		return out
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Go(func() {
			m, err := r.Metadata.Resource(namespacesGVR).Get(ctx, name, metav1.GetOptions{})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case apierrors.IsNotFound(err):
				// No real cluster has objects in a namespace that does
				// not exist: say what was seen, not a guess.
				out[name] = inspect.StateRead{Why: "it was not found"}
			case err != nil:
				fail(name, "get", err)
			default:
				set(name, m.DeletionTimestamp != nil)
			}
		})
	}
	wg.Wait()
	return out
}

func indexOf(l []nsName, k nsName) (int, bool) {
	for n, x := range l {
		if x == k {
			return n, true
		}
	}
	return -1, false
}
