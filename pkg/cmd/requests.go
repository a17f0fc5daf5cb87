package cmd

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"

	"k8s.io/client-go/rest"
)

// RequestCountEnv, when set to 1, makes the plugin count its API requests
// and print the count on stderr as it exits, as "captf-requests: N". The
// benchmarks read it; nothing else should.
const RequestCountEnv = "KUBECTL_CAPTF_COUNT_REQUESTS"

// requestCounter counts the requests of every client built from the
// command's rest.Config.
type requestCounter struct{ n atomic.Int64 }

func newRequestCounter() *requestCounter {
	if os.Getenv(RequestCountEnv) != "1" {
		return nil
	}
	return &requestCounter{}
}

// wrap is a ConfigFlags WrapConfigFn: every transport built from the
// config counts through it.
func (c *requestCounter) wrap(cfg *rest.Config) *rest.Config {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			c.n.Add(1)
			return rt.RoundTrip(r)
		})
	})
	return cfg
}

func (c *requestCounter) report(w io.Writer) {
	if c != nil {
		fmt.Fprintf(w, "captf-requests: %d\n", c.n.Load())
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
