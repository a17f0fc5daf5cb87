package fakeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
)

const (
	jsonType  = runtime.ContentTypeJSON     // application/json
	protoType = runtime.ContentTypeProtobuf // application/vnd.kubernetes.protobuf
)

func (s *Server) serve(w http.ResponseWriter, r *http.Request, req Request) {
	if req.Resource == "" {
		s.serveDiscovery(w, req)
		return
	}
	gvr := schema.GroupVersionResource{Group: req.Group, Version: req.Version, Resource: req.Resource}
	res := s.find(gvr)
	switch {
	case res == nil || req.Subresource != "" || req.Namespace != "" && !res.namespaced:
		WriteError(w, notFound())
		return
	case res.namespaced && req.Namespace == "" && req.Verb != "list" && req.Verb != "watch":
		WriteError(w, notFound()) // a namespaced object's path has its namespace
		return
	case !slices.Contains(res.verbs, req.Verb):
		WriteError(w, apierrors.NewMethodNotSupported(gvr.GroupResource(), req.Verb))
		return
	case len(req.Query["dryRun"]) > 0:
		WriteError(w, apierrors.NewBadRequest("fakeapi does not do dry runs"))
		return
	}
	switch req.Verb {
	case "get":
		obj, err := s.store.Get(gvr, req.Namespace, req.Name)
		s.respond(w, r, http.StatusOK, res, obj, err)
	case "list", "watch":
		var opts metav1.ListOptions
		if err := s.params.DecodeParameters(req.Query, schema.GroupVersion{Version: "v1"}, &opts); err != nil {
			WriteError(w, apierrors.NewBadRequest(err.Error()))
			return
		}
		if req.Verb == "watch" {
			s.watch(w, r, res, req.Namespace, opts)
			return
		}
		list, err := s.store.List(gvr, res.gvk(), req.Namespace, opts)
		s.respond(w, r, http.StatusOK, res, list, err)
	case "create":
		s.create(w, r, req, res)
	case "update":
		s.update(w, r, req, res)
	case "patch":
		s.patch(w, r, req, res)
	case "delete":
		s.delete(w, req, res)
	}
}

func notFound() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound,
		Reason: metav1.StatusReasonNotFound, Message: "the server could not find the requested resource"}}
}

func (s *Server) serveDiscovery(w http.ResponseWriter, req Request) {
	if req.Method != http.MethodGet {
		WriteError(w, apierrors.NewMethodNotSupported(schema.GroupResource{}, req.Verb))
		return
	}
	parts := strings.Split(strings.Trim(req.Path, "/"), "/")
	var doc any
	switch {
	case req.Path == "/version":
		doc = &version.Info{Major: "1", Minor: "34", GitVersion: "v1.34.0-fakeapi", Platform: "linux/amd64"}
	case len(parts) == 1 && parts[0] == "api":
		doc = &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: strings.TrimPrefix(s.srv.URL, "http://")}}}
	case len(parts) == 2 && parts[0] == "api":
		if l := s.resourceList(schema.GroupVersion{Version: parts[1]}); l != nil {
			doc = l
		}
	case len(parts) == 1 && parts[0] == "apis":
		doc = s.groups()
	case len(parts) == 2 && parts[0] == "apis":
		if g := s.group(parts[1]); g != nil {
			doc = g
		}
	case len(parts) == 3 && parts[0] == "apis":
		if l := s.resourceList(schema.GroupVersion{Group: parts[1], Version: parts[2]}); l != nil {
			doc = l
		}
	}
	if doc == nil {
		WriteError(w, notFound())
		return
	}
	writeJSON(w, http.StatusOK, doc)
}

// negotiate picks a response's media type from the Accept header as the
// API server does: the first entry it can serve. Protobuf is for built-in
// types only, as custom resources are JSON only; an entry that asks for a
// conversion (as=...) can be served only when it is to the
// PartialObjectMetadata(List) the metadata client asks for, and meta is
// then true. ok is false when no entry can be served (406).
func negotiate(accept string, protobuf, list bool) (mediaType string, asMeta, ok bool) {
	if strings.TrimSpace(accept) == "" {
		return jsonType, false, true
	}
	want := "PartialObjectMetadata"
	if list {
		want += "List"
	}
	for _, entry := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(entry))
		if err != nil {
			continue
		}
		switch as := params["as"]; {
		case as == "":
			asMeta = false
		case as == want && params["g"] == metav1.GroupName && params["v"] == "v1":
			asMeta = true
		default:
			continue
		}
		switch mt {
		case protoType:
			if protobuf || asMeta {
				return protoType, asMeta, true
			}
		case jsonType, "application/*", "*/*":
			return jsonType, asMeta, true
		}
	}
	return "", false, false
}

func notAcceptable() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotAcceptable,
		Reason: metav1.StatusReasonNotAcceptable, Message: "only the following media types are accepted: application/json, application/vnd.kubernetes.protobuf"}}
}

// respond sends obj (or err) in the media type the request accepts.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, code int, res *resource, obj runtime.Object, err error) {
	if err != nil {
		WriteError(w, err)
		return
	}
	mt, asMeta, ok := negotiate(r.Header.Get("Accept"), !res.custom, meta.IsListType(obj))
	if !ok {
		WriteError(w, notAcceptable())
		return
	}
	if asMeta {
		if obj, err = partial(obj); err != nil {
			WriteError(w, err)
			return
		}
	}
	var buf bytes.Buffer
	if err := s.encoder(mt).Encode(obj, &buf); err != nil {
		WriteError(w, apierrors.NewInternalError(err))
		return
	}
	w.Header().Set("Content-Type", mt)
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// encoder encodes an object in mediaType with its apiVersion and kind:
// in protobuf, in the runtime.Unknown envelope after the "k8s\x00" magic.
func (s *Server) encoder(mediaType string) runtime.Encoder {
	info, _ := runtime.SerializerInfoForMediaType(s.codecs.SupportedMediaTypes(), mediaType)
	return runtime.WithVersionEncoder{Encoder: info.Serializer, ObjectTyper: s.scheme}
}

// partial is obj's metadata, as the API server converts an object or a
// list for the metadata client.
func partial(obj runtime.Object) (runtime.Object, error) {
	one := func(o runtime.Object) (*metav1.PartialObjectMetadata, error) {
		p := &metav1.PartialObjectMetadata{}
		b, err := json.Marshal(o)
		if err == nil {
			err = json.Unmarshal(b, p)
		}
		p.TypeMeta = metav1.TypeMeta{APIVersion: metav1.SchemeGroupVersion.String(), Kind: "PartialObjectMetadata"}
		return p, err
	}
	if !meta.IsListType(obj) {
		return one(obj)
	}
	lm, err := meta.ListAccessor(obj)
	if err != nil {
		return nil, err
	}
	out := &metav1.PartialObjectMetadataList{
		TypeMeta: metav1.TypeMeta{APIVersion: metav1.SchemeGroupVersion.String(), Kind: "PartialObjectMetadataList"},
		ListMeta: metav1.ListMeta{ResourceVersion: lm.GetResourceVersion(), Continue: lm.GetContinue(), RemainingItemCount: lm.GetRemainingItemCount()},
	}
	err = meta.EachListItem(obj, func(o runtime.Object) error {
		p, err := one(o)
		if err == nil {
			out.Items = append(out.Items, *p)
		}
		return err
	})
	return out, err
}

// watch streams watch events, a JSON object a line or length-prefixed
// protobuf frames, each flushed as it is written, until the client goes,
// timeoutSeconds pass or the server closes.
func (s *Server) watch(w http.ResponseWriter, r *http.Request, res *resource, ns string, opts metav1.ListOptions) {
	mt, asMeta, ok := negotiate(r.Header.Get("Accept"), !res.custom, false)
	if !ok {
		WriteError(w, notAcceptable())
		return
	}
	wt, err := s.store.startWatch(res.gvr, ns, opts)
	if err != nil {
		WriteError(w, err)
		return
	}
	ctx, end := context.WithCancel(r.Context())
	defer end()
	ended, running := s.watchEnd(), ctx.Done()
	go func() {
		select {
		case <-ended:
			end()
		case <-running:
		}
	}()
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
		var cancel func()
		ctx, cancel = context.WithTimeout(ctx, time.Duration(*opts.TimeoutSeconds)*time.Second)
		defer cancel()
	}
	info, _ := runtime.SerializerInfoForMediaType(s.codecs.SupportedMediaTypes(), mt)
	framed := streaming.NewEncoder(info.StreamSerializer.Framer.NewFrameWriter(w), info.StreamSerializer.Serializer)
	embedded := s.encoder(mt)
	if mt == protoType {
		w.Header().Set("Content-Type", mt+";stream=watch")
	} else {
		w.Header().Set("Content-Type", mt)
	}
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	flush()
	_ = wt.run(ctx.Done(), func(e watch.Event) error {
		obj := e.Object
		if asMeta {
			var err error
			if obj, err = partial(obj); err != nil {
				return err
			}
		}
		var buf bytes.Buffer
		if err := embedded.Encode(obj, &buf); err != nil {
			return err
		}
		if err := framed.Encode(&metav1.WatchEvent{Type: string(e.Type), Object: runtime.RawExtension{Raw: buf.Bytes()}}); err != nil {
			return err
		}
		flush()
		return nil
	})
}

// decode reads a request's body as an object of res: built-in types in
// JSON or protobuf, custom resources in JSON.
func (s *Server) decode(req Request, res *resource) (runtime.Object, error) {
	gvk := res.gvk()
	if res.custom {
		if mt, _, _ := mime.ParseMediaType(req.ContentType); mt != jsonType && mt != "" {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, req.Verb, res.gvr.GroupResource(), "", "the body of a custom resource must be JSON, not "+mt, 0, false)
		}
		u := &unstructured.Unstructured{}
		if err := utiljson.Unmarshal(req.Body, &u.Object); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if u.GetKind() == "" && u.GetAPIVersion() == "" {
			u.SetGroupVersionKind(gvk)
		}
		if u.GroupVersionKind() != gvk {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is a %v, not a %v", u.GroupVersionKind(), gvk))
		}
		return u, nil
	}
	obj, got, err := s.codecs.UniversalDeserializer().Decode(req.Body, &gvk, nil)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if *got != gvk {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is a %v, not a %v", *got, gvk))
	}
	return obj, nil
}

// readBack answers a write with the object as stored.
func (s *Server) readBack(w http.ResponseWriter, r *http.Request, code int, res *resource, ns, name string, err error) {
	if err != nil {
		WriteError(w, err)
		return
	}
	obj, err := s.store.Get(res.gvr, ns, name)
	s.respond(w, r, code, res, obj, err)
}

func (s *Server) create(w http.ResponseWriter, r *http.Request, req Request, res *resource) {
	if res.kind == "SelfSubjectReview" {
		review := &authenticationv1.SelfSubjectReview{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.Now()}}
		review.Status.UserInfo = s.user
		s.respond(w, r, http.StatusCreated, res, review, nil)
		return
	}
	obj, err := s.decode(req, res)
	if err != nil {
		WriteError(w, err)
		return
	}
	acc, _ := meta.Accessor(obj)
	if acc.GetName() == "" && acc.GetGenerateName() != "" {
		acc.SetName(acc.GetGenerateName() + utilrand.String(5))
	}
	if acc.GetName() == "" {
		WriteError(w, apierrors.NewInvalid(res.gvk().GroupKind(), "", field.ErrorList{field.Required(field.NewPath("metadata", "name"), "name or generateName is required")}))
		return
	}
	if !res.namespaced {
		acc.SetNamespace("")
	}
	acc.SetUID(uuid.NewUUID())
	acc.SetCreationTimestamp(metav1.Now())
	acc.SetResourceVersion("")
	err = s.store.Create(res.gvr, obj, req.Namespace)
	s.readBack(w, r, http.StatusCreated, res, req.Namespace, acc.GetName(), err)
}

func (s *Server) update(w http.ResponseWriter, r *http.Request, req Request, res *resource) {
	obj, err := s.decode(req, res)
	if err != nil {
		WriteError(w, err)
		return
	}
	acc, _ := meta.Accessor(obj)
	if acc.GetName() != req.Name {
		WriteError(w, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", acc.GetName(), req.Name)))
		return
	}
	// The API server keeps what only it sets.
	if old, err := s.store.Get(res.gvr, req.Namespace, req.Name); err == nil {
		o, _ := meta.Accessor(old)
		acc.SetUID(o.GetUID())
		acc.SetCreationTimestamp(o.GetCreationTimestamp())
	}
	err = s.store.Update(res.gvr, obj, req.Namespace)
	s.readBack(w, r, http.StatusOK, res, req.Namespace, req.Name, err)
}

// patch applies a JSON, merge or (to built-in types) strategic merge patch
// through the tracker's own reaction. A patch that does not name a
// resourceVersion is retried when a write comes between its read and its
// write, as the API server does.
func (s *Server) patch(w http.ResponseWriter, r *http.Request, req Request, res *resource) {
	mt, _, _ := mime.ParseMediaType(req.ContentType)
	pt := types.PatchType(mt)
	switch {
	case pt == types.JSONPatchType || pt == types.MergePatchType:
	case pt == types.StrategicMergePatchType && !res.custom:
	default:
		WriteError(w, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", res.gvr.GroupResource(), req.Name,
			fmt.Sprintf("the patch type %q is not supported here", mt), 0, false))
		return
	}
	react := k8stesting.ObjectReaction(s.store)
	var err error
	for range 10 {
		_, _, err = react(k8stesting.NewPatchAction(res.gvr, req.Namespace, req.Name, pt, req.Body))
		if !apierrors.IsConflict(err) || bytes.Contains(req.Body, []byte("resourceVersion")) {
			break
		}
	}
	if _, ok := err.(apierrors.APIStatus); err != nil && !ok {
		err = apierrors.NewBadRequest(err.Error())
	}
	s.readBack(w, r, http.StatusOK, res, req.Namespace, req.Name, err)
}

func (s *Server) delete(w http.ResponseWriter, req Request, res *resource) {
	var opts metav1.DeleteOptions
	if len(req.Body) > 0 {
		if _, _, err := s.codecs.UniversalDeserializer().Decode(req.Body, nil, &opts); err != nil {
			WriteError(w, apierrors.NewBadRequest(err.Error()))
			return
		}
	}
	obj, err := s.store.Get(res.gvr, req.Namespace, req.Name)
	if err == nil {
		err = s.store.Delete(res.gvr, req.Namespace, req.Name, opts)
	}
	if err != nil {
		WriteError(w, err)
		return
	}
	acc, _ := meta.Accessor(obj)
	writeJSON(w, http.StatusOK, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess,
		Details: &metav1.StatusDetails{Name: req.Name, Group: res.gvr.Group, Kind: res.gvr.Resource, UID: acc.GetUID()}})
}

// WriteError answers with err as the API server does: a metav1.Status
// with its code and reason (an apierrors error keeps them; any other is
// an InternalError), so that apierrors.IsNotFound and the like work on
// the client's side.
func WriteError(w http.ResponseWriter, err error) {
	var st metav1.Status
	if s, ok := err.(apierrors.APIStatus); ok {
		st = s.Status()
	} else {
		st = apierrors.NewInternalError(err).Status()
	}
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	st.Status = metav1.StatusFailure
	if st.Code == 0 {
		st.Code = http.StatusInternalServerError
	}
	writeJSON(w, int(st.Code), &st)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":500}`)
	}
	w.Header().Set("Content-Type", jsonType)
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
