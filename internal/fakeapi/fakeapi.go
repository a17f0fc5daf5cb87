// Package fakeapi is an in-process Kubernetes API server for unit tests:
// it speaks the real HTTP API (discovery, get, list, watch, create, update,
// patch, delete; JSON, and protobuf for built-in types) over an
// httptest.Server, so that tests drive the real client-go clients the
// plugin uses (typed, dynamic, metadata, REST streaming, informers,
// cli-runtime's resource builder), from objects kept in client-go's
// ObjectTracker.
//
//	srv := fakeapi.New(t, lease, pod, terraformCluster)
//	kube := kubernetes.NewForConfigOrDie(srv.Config())
//	srv.Intercept(fakeapi.Fail(func(r fakeapi.Request) bool { return r.Verb == "list" && r.Resource == "pods" },
//		apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("RBAC"))))
//	... run the code under test with kube ...
//	if n := srv.Count("list", "leases"); n != 1 { t.Errorf("%d lists of leases, want 1", n) }
//
// What it serves: core/v1 pods, secrets, namespaces and events,
// coordination.k8s.io/v1 leases, batch/v1 jobs, events.k8s.io/v1 events,
// authentication.k8s.io/v1 selfsubjectreviews (create, answering
// Options.User), and the custom resources of Options.CustomResources (by
// default CAPTFResources), with unaggregated discovery for them all. Lists
// take labelSelector, fieldSelector (metadata.name, metadata.namespace),
// limit and continue; watches start at a resourceVersion or with the
// present objects (sendInitialEvents too). Updates and patches check the
// resourceVersion (409 Conflict); patches are JSON, merge or, for
// built-in types, strategic merge. Errors are metav1.Status bodies.
//
// What it does not do: validation, defaulting, admission, dry runs,
// server-side apply, deletecollection, subresources, field management,
// finalizers or garbage collection, aggregated discovery, OpenAPI. Core
// and events.k8s.io Events are stored apart. A continued list pages
// through the present objects, not a snapshot of the first page's
// resourceVersion.
package fakeapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
)

// Options configure a Server.
type Options struct {
	// CustomResources are served besides the built-in resources: nil means
	// CAPTFResources(); an empty slice, none (as a cluster without CAPTF's
	// CRDs, whose lists are 404 Not Found).
	CustomResources []CustomResource
	// User is the user a SelfSubjectReview names; an empty Username means
	// DefaultUser.
	User authenticationv1.UserInfo
}

// DefaultUser is the user a SelfSubjectReview names unless Options.User
// says otherwise: kubeadm's (and kind's) admin.
const DefaultUser = "kubernetes-admin"

// Server is a running fake API server. Its methods are safe for
// concurrent use.
type Server struct {
	srv       *httptest.Server
	scheme    *runtime.Scheme
	codecs    serializer.CodecFactory
	params    runtime.ParameterCodec
	store     *store
	resources []resource
	user      authenticationv1.UserInfo

	// stop ends every request in flight when the server closes (watches,
	// interceptors that hang), so that closing does not wait for them.
	stop      context.Context
	closeOnce sync.Once
	cancel    context.CancelFunc

	mu           sync.Mutex
	requests     []Request
	interceptors []*interceptor
	// watchesEnd is closed by EndWatches, then replaced.
	watchesEnd chan struct{}
}

// Request is one request the server received, as the API server
// classifies it.
type Request struct {
	// Verb is the Kubernetes verb: get, list, watch, create, update,
	// patch, delete, deletecollection; for a path that is no resource
	// (discovery: /api, /apis, /apis/<group>/<version>; /version), the
	// HTTP method in lower case.
	Verb   string
	Method string
	Path   string
	Query  url.Values
	// Group, Version, Resource, Subresource, Namespace and Name are the
	// parts of a resource's path ("" for core's group).
	Group, Version, Resource, Subresource string
	Namespace, Name                       string
	// Accept and ContentType are the request's headers.
	Accept, ContentType string
	// Body is the request's body, if any.
	Body []byte
}

// New starts a server holding objs, stopped when the test ends. Objects
// are typed (client-go's scheme) or unstructured (a custom resource, or a
// built-in kind, stored as its Go type); PartialObjectMetadata with its
// apiVersion and kind is stored as its kind too.
func New(t testing.TB, objs ...runtime.Object) *Server {
	t.Helper()
	return NewWithOptions(t, Options{}, objs...)
}

// NewWithOptions is New with options.
func NewWithOptions(t testing.TB, o Options, objs ...runtime.Object) *Server {
	t.Helper()
	if o.CustomResources == nil {
		o.CustomResources = CAPTFResources()
	}
	if o.User.Username == "" {
		o.User = authenticationv1.UserInfo{Username: DefaultUser, Groups: []string{"kubeadm:cluster-admins", "system:authenticated"}}
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	utilruntime.Must(metav1.AddMetaToScheme(scheme))
	for _, c := range o.CustomResources {
		gv := schema.GroupVersion{Group: c.Group, Version: c.Version}
		scheme.AddKnownTypeWithName(gv.WithKind(c.Kind), &unstructured.Unstructured{})
		scheme.AddKnownTypeWithName(gv.WithKind(c.Kind+"List"), &unstructured.UnstructuredList{})
	}
	s := &Server{scheme: scheme, codecs: serializer.NewCodecFactory(scheme), params: runtime.NewParameterCodec(scheme),
		resources: served(o.CustomResources), user: o.User}
	s.store = newStore(scheme, s.codecs, s.resources)
	for _, obj := range objs {
		if err := s.store.Add(obj); err != nil {
			t.Fatalf("fakeapi: adding %T: %v", obj, err)
		}
	}
	s.stop, s.cancel = context.WithCancel(context.Background())
	s.watchesEnd = make(chan struct{})
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

// URL is the server's address, http://127.0.0.1:<port>.
func (s *Server) URL() string { return s.srv.URL }

// Config is a client configuration for the server, without client-side
// rate limiting (QPS -1), for kubernetes.NewForConfig,
// dynamic.NewForConfig, metadata.NewForConfig or rest.RESTClientFor. Each
// call returns a new one, free to change (ContentType, timeouts).
func (s *Server) Config() *rest.Config {
	return &rest.Config{Host: s.srv.URL, QPS: -1}
}

// Tracker holds the server's objects: add, update and delete them here
// as a test goes on (watches see the changes). Writes get resourceVersions
// and conflict checks as through the API; Add keeps a resourceVersion the
// object already has.
func (s *Server) Tracker() k8stesting.ObjectTracker { return s.store }

// Close stops the server, ending the requests in flight; the test's end
// calls it too.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.cancel()
		s.srv.Close()
	})
}

// EndWatches ends every watch in flight, as the API server does when it
// restarts or a resource stops being served: the clients' reflectors then
// watch again, or list again. (A watch whose request arrives while it
// runs may be missed.)
func (s *Server) EndWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.watchesEnd)
	s.watchesEnd = make(chan struct{})
}

// watchEnd is closed when the watches in flight are ended.
func (s *Server) watchEnd() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watchesEnd
}

// Requests are the requests received so far (since ResetRequests), in
// order of arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ResetRequests forgets the requests received so far.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// Count is the number of requests received so far with this verb on
// this resource (its plural name, in any group).
func (s *Server) Count(verb, resource string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Verb == verb && r.Resource == resource {
			n++
		}
	}
	return n
}

type interceptor struct {
	fn func(http.ResponseWriter, *http.Request) bool
}

// Intercept adds fn, which sees every request before the server serves
// it, in the order added, and answers it itself by returning true: to
// fail (WriteError, Fail), delay, hang until r.Context() is done, or
// send a body of its own. RequestInfo(r) classifies the request; its
// body is r.Body. remove takes fn away.
func (s *Server) Intercept(fn func(w http.ResponseWriter, r *http.Request) bool) (remove func()) {
	i := &interceptor{fn: fn}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.interceptors = append(s.interceptors, i)
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for k, x := range s.interceptors {
			if x == i {
				s.interceptors = append(s.interceptors[:k:k], s.interceptors[k+1:]...)
				return
			}
		}
	}
}

// Fail is an interceptor that answers every request match accepts with
// err, as the API server sends it (an apierrors error keeps its code and
// reason; any other is a 500).
func Fail(match func(Request) bool, err error) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if !match(RequestInfo(r)) {
			return false
		}
		WriteError(w, err)
		return true
	}
}

type requestKey struct{}

// RequestInfo is how the server classified r, for interceptors.
func RequestInfo(r *http.Request) Request {
	req, _ := r.Context().Value(requestKey{}).(Request)
	return req
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := parse(r, body)
	ctx, cancel := context.WithCancel(context.WithValue(r.Context(), requestKey{}, req))
	defer cancel()
	defer context.AfterFunc(s.stop, cancel)()
	r = r.WithContext(ctx)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	interceptors := append([]*interceptor(nil), s.interceptors...)
	s.mu.Unlock()
	for _, i := range interceptors {
		r.Body = io.NopCloser(bytes.NewReader(body))
		if i.fn(w, r) {
			return
		}
	}
	s.serve(w, r, req)
}

// parse classifies a request as the API server's RequestInfoFactory does.
func parse(r *http.Request, body []byte) Request {
	req := Request{
		Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Verb: strings.ToLower(r.Method),
		Accept: r.Header.Get("Accept"), ContentType: r.Header.Get("Content-Type"),
	}
	if len(body) > 0 {
		req.Body = body
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) > 2 && parts[0] == "api":
		req.Version, parts = parts[1], parts[2:]
	case len(parts) > 3 && parts[0] == "apis":
		req.Group, req.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return req // not a resource: discovery, /version
	}
	if parts[0] == "namespaces" && len(parts) > 1 {
		req.Namespace = parts[1]
		if len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
			parts = parts[2:]
		} else {
			req.Namespace = "" // a Namespace itself, which has none
		}
	}
	req.Resource = parts[0]
	if len(parts) > 1 {
		req.Name = parts[1]
	}
	if len(parts) > 2 {
		req.Subresource = strings.Join(parts[2:], "/")
	}
	switch r.Method {
	case http.MethodGet:
		switch {
		case req.Name != "":
			req.Verb = "get"
		case req.Query.Get("watch") == "true" || req.Query.Get("watch") == "1":
			req.Verb = "watch"
		default:
			req.Verb = "list"
		}
	case http.MethodPost:
		req.Verb = "create"
	case http.MethodPut:
		req.Verb = "update"
	case http.MethodPatch:
		req.Verb = "patch"
	case http.MethodDelete:
		req.Verb = "delete"
		if req.Name == "" {
			req.Verb = "deletecollection"
		}
	}
	return req
}
