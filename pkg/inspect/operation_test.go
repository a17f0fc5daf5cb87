package inspect

import "testing"

func TestShortOperation(t *testing.T) {
	for in, want := range map[string]string{
		"OperationTypeApply": "apply", "OperationTypePlan": "plan", "OperationTypeRefresh": "refresh",
		"OperationTypeInvalid": "invalid", "state-mv": "state-mv", "migration source state": "migration source state",
		"OperationType": "OperationType", "OperationTypeFutureThing": "OperationTypeFutureThing", "": "",
	} {
		if got := ShortOperation(in); got != want {
			t.Errorf("ShortOperation(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQuotedOperation(t *testing.T) {
	for in, want := range map[string]string{
		"OperationTypeApply": "apply", "OperationTypeRefresh": "refresh", "state-rm": `"state-rm"`, "apply": `"apply"`,
		`apply, lock ID "x"`: `"apply, lock ID \"x\""`, "": `""`,
	} {
		if got := QuotedOperation(in); got != want {
			t.Errorf("QuotedOperation(%q) = %s, want %s", in, got, want)
		}
	}
}
