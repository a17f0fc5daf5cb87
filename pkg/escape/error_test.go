package escape

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// The plugin's and cobra's messages keep their lines; what the cluster
// wrote into an error, however deep in its chain, stays on its line.
func TestError(t *testing.T) {
	webhook := apierrors.NewForbidden(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "lock-tfstate-default-x",
		errors.New("denied\nerror: fake line\x1b[2J"))
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"cobra's suggestions", errors.New("unknown command \"lock\" for \"kubectl captf\"\n\nDid you mean this?\n\tlocks\n\tunlock\n"),
			"unknown command \"lock\" for \"kubectl captf\"\n\nDid you mean this?\n\tlocks\n\tunlock"},
		{"a control character in the plugin's own line", errors.New("a\x1b[31mb\nc"), "a^[[31mb\nc"},
		{"an API status", fmt.Errorf("cannot update leases: %w", webhook),
			`cannot update leases: leases.coordination.k8s.io "lock-tfstate-default-x" is forbidden: denied\nerror: fake line^[[2J`},
		{"an API status in a join", errors.Join(errors.New("first"), fmt.Errorf("second: %w", webhook)),
			`first` + "\n" + `second: leases.coordination.k8s.io "lock-tfstate-default-x" is forbidden: denied\nerror: fake line^[[2J`},
		{"an API status in an aggregate", utilerrors.NewAggregate([]error{webhook}),
			`leases.coordination.k8s.io "lock-tfstate-default-x" is forbidden: denied\nerror: fake line^[[2J`},
		{"a marked body", fmt.Errorf("reading a list response: %w", Remote(fmt.Errorf("items is %v, not an array", "x\nerror: y"))),
			`reading a list response: items is x\nerror: y, not an array`},
	} {
		if got := Error(c.err); got != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, got, c.want)
		}
		for _, l := range strings.Split(Error(c.err), "\n")[1:] {
			if strings.HasPrefix(l, "error: ") {
				t.Errorf("%s: a line of its own says %q", c.name, l)
			}
		}
	}
	if Remote(nil) != nil {
		t.Error("Remote(nil) is not nil")
	}
}
