package unlock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"

	"github.com/captf-io/kubectl-captf/pkg/advice"
	"github.com/captf-io/kubectl-captf/pkg/audit"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// recordEvent records a Warning Event about the object, or the Lease when
// no object exists: the user who asked, the Lease, the verdict, then the
// lock's previous holder and operation as the holder wrote them
// (audit.Note).
func (u *Unlocker) recordEvent(ctx context.Context, r inspect.Result) (string, error) {
	l := r.Facts.Lease
	regarding := corev1.ObjectReference{
		APIVersion: "coordination.k8s.io/v1", Kind: "Lease",
		Namespace: l.Namespace, Name: l.Name, UID: l.UID,
	}
	if o := r.Facts.Owner; o != nil && o.Exists != nil && *o.Exists {
		regarding = corev1.ObjectReference{
			APIVersion: object.Group + "/" + object.Version, Kind: o.Ref.Kind.Name,
			Namespace: o.Ref.Namespace, Name: o.Ref.Name, UID: o.UID,
		}
	}
	holder := audit.Holder{ID: l.ID}
	if l.Info != nil {
		holder.Known, holder.Who, holder.Operation = true, l.Info.Who, l.Info.Operation
	}
	note := audit.Note(u.whoami(ctx), u.Impersonated, l.Namespace, l.Name, string(r.Decision.Verdict), holder)
	host, _ := os.Hostname()
	now := u.now()
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: eventName(regarding.Name, now), Namespace: regarding.Namespace},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: audit.Controller,
		ReportingInstance:   truncate("kubectl-captf-"+host, 128),
		Action:              audit.Action,
		Reason:              audit.Reason,
		Type:                corev1.EventTypeWarning,
		Regarding:           regarding,
		Note:                note,
	}
	// The name is fixed before the first attempt, so a create sent again
	// after an answer that was lost cannot record the unlock twice: the
	// server answers AlreadyExists, which means recorded.
	events := u.Client.EventsV1().Events(regarding.Namespace)
	tries := 0
	err := retry.OnError(retry.DefaultBackoff, func(err error) bool { return ctx.Err() == nil && !refusedForSure(err) }, func() error {
		tries++
		_, err := events.Create(ctx, ev, metav1.CreateOptions{})
		if tries > 1 && apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return ev.Name, nil
}

// eventName names the Event as client-go's recorders name theirs,
// "<object>.<time in hex>", when that is a valid name (a DNS-1123
// subdomain, 253 characters at most): for an object name of up to 236
// characters. A longer one is cut, and a hash of the whole name follows
// the cut, so that two long names that share their first characters keep
// Events of their own: "<cut>.<hash>.<time in hex>". A cut never ends in
// "-" or ".", which would make the name invalid (a valid object name
// starts with a letter or digit, so something is always left).
func eventName(object string, at time.Time) string {
	suffix := "." + strconv.FormatUint(uint64(at.UnixNano()), 16)
	if len(object)+len(suffix) <= validation.DNS1123SubdomainMaxLength {
		return object + suffix
	}
	sum := sha256.Sum256([]byte(object))
	hash := "." + hex.EncodeToString(sum[:8])
	cut := strings.TrimRight(object[:validation.DNS1123SubdomainMaxLength-len(hash)-len(suffix)], "-.")
	return cut + hash + suffix
}

// whoami names the requesting user through a SelfSubjectReview, when
// allowed ("" when not), once per Unlocker: every Event of a run names the
// same user, and --all-stale pays one request for it, not one a lock.
func (u *Unlocker) whoami(ctx context.Context) string {
	u.userOnce.Do(func() {
		r, err := u.Client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err == nil {
			u.user = r.Status.UserInfo.Username
		}
	})
	return u.user
}

// reconcile patches the reconcile annotation onto the object: any update
// of it makes CAPTF's controller reconcile, and it does not watch Leases.
func (u *Unlocker) reconcile(ctx context.Context, o *inspect.Owner) (string, error) {
	value := u.now().UTC().Format(time.RFC3339)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{advice.ReconcileAnnotation: value}}})
	_, err := u.Dynamic.Resource(o.Ref.Kind.GVR()).Namespace(o.Ref.Namespace).Patch(ctx, o.Ref.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return "", err
	}
	return advice.ReconcileAnnotation + "=" + value, nil
}

// truncate cuts s to at most n bytes on a rune boundary: holder-written
// text must not push an Event past the API's limits.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
