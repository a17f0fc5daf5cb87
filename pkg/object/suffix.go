package object

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Ref names one CAPTF object.
type Ref struct {
	Kind      Kind
	Namespace string
	Name      string
}

// Suffix is the object's state suffix.
func (r Ref) Suffix() string { return StateSuffix(r.Namespace, r.Kind, r.Name) }

// String is kubectl's TYPE/NAME form, for example "terraformcluster/demo".
func (r Ref) String() string { return TypeName(r.Kind.Name, r.Name) }

// TypeName is kubectl's TYPE/NAME for an object of a kind: "terraformcluster/demo".
func TypeName(kind, name string) string { return strings.ToLower(kind) + "/" + name }

// StateSuffix is CAPTF's secret_suffix for an object: the first 16 hex
// characters of sha256("<namespace>/<Kind>/<name>"), a dash and the kind
// code. The hash is taken over the exact CamelCase kind; a lowercase kind
// gives a different, wrong suffix.
func StateSuffix(namespace string, kind Kind, name string) string {
	return ShortHash(namespace+"/"+kind.Name+"/"+name) + "-" + kind.Code
}

// ShortHash is the first 16 lowercase hex characters of sha256(s), the form
// CAPTF uses wherever a name is too long or must be fixed-length.
func ShortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:16]
}

// LockLeaseName is the name of the Lease the kubernetes backend locks with.
func LockLeaseName(workspace, suffix string) string {
	return LockLeasePrefix + workspace + "-" + suffix
}

// StateSecretName is the name of the (first) state Secret.
func StateSecretName(workspace, suffix string) string {
	return "tfstate-" + workspace + "-" + suffix
}

// LockLeasePrefix starts the name of every Terraform/OpenTofu lock Lease.
const LockLeasePrefix = "lock-tfstate-"

// DefaultWorkspace is the only workspace CAPTF uses.
const DefaultWorkspace = "default"
