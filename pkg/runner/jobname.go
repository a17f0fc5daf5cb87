// Package runner holds CAPTF's runner Job and pod naming: how a Job name is
// built, and the own-pod test by which the controller recognises a lock
// holder as one of an object's own runner pods.
package runner

import (
	"slices"
	"strconv"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// Ops are the operations a runner Job can perform.
var Ops = []string{"apply", "destroy", "refresh", "drift", "restore", "plan"}

// MaxJobNameLen is the longest Job name CAPTF builds with the object name in
// clear. A pod adds "-" and 5 characters, so its name (the holder's
// hostname) stays within 63 characters and is never truncated.
const MaxJobNameLen = 57

// PodTailLen is the length of the random tail the Job controller appends to
// a Job name to make a pod name.
const PodTailLen = 5

// JobName builds CAPTF's runner Job name
// "captf-<code>-<name>-<op>-a<attempt>-<hash6>". When that is longer than
// 57 characters the whole name segment is replaced by the first 16 hex
// characters of sha256(name); nothing is truncated.
func JobName(kind object.Kind, name, op string, attempt int32, hash6 string) string {
	if n := jobName(kind.Code, name, op, attempt, hash6); len(n) <= MaxJobNameLen {
		return n
	}
	return jobName(kind.Code, object.ShortHash(name), op, attempt, hash6)
}

func jobName(code, nameSegment, op string, attempt int32, hash6 string) string {
	return "captf-" + code + "-" + nameSegment + "-" + op + "-a" + strconv.FormatInt(int64(attempt), 10) + "-" + hash6
}

func isOp(s string) bool { return slices.Contains(Ops, s) }
