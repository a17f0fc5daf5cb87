package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

const protobufType = "application/vnd.kubernetes.protobuf"

// rawList is a floor row: unpaged GETs of whole lists, one after the
// other, as curl does them (no compression), each read to the end and not
// decoded. It is what the API server needs to hand over the data, and no
// client can do with less.
type rawList struct {
	bed    *testbed.Cluster
	paths  []string
	accept string
	client *http.Client
}

func (r *rawList) get(ctx context.Context) (Measurement, error) {
	if r.client == nil {
		pem, err := os.ReadFile(r.bed.CAFile)
		if err != nil {
			return Measurement{}, err
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		r.client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableCompression: true}}
	}
	var m Measurement
	for _, path := range r.paths {
		one, err := r.getOne(ctx, path)
		m.Wall, m.Requests, m.Bytes = m.Wall+one.Wall, m.Requests+1, m.Bytes+one.Bytes
		if err != nil {
			return m, err
		}
	}
	return m, nil
}

func (r *rawList) getOne(ctx context.Context, path string) (Measurement, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.bed.Server+path, nil)
	if err != nil {
		return Measurement{}, err
	}
	req.Header.Set("Authorization", "Bearer "+testbed.Token(testbed.AdminUser))
	req.Header.Set("Accept", r.accept)
	start := time.Now()
	resp, err := r.client.Do(req)
	if err != nil {
		return Measurement{}, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	m := Measurement{Wall: time.Since(start), Requests: 1, Bytes: n}
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return m, err
}

// Point is the growth curve at one number of locks.
type Point struct {
	Locks   int
	Captf   Measurement
	Kubectl Measurement
	// Floor is the raw GETs of all Leases and all Pods, protobuf.
	Floor time.Duration
}

func pointOf(locks int, rows []Row) Point {
	p := Point{Locks: locks}
	for _, r := range rows {
		switch r.Name {
		case rowLocks:
			p.Captf = r.Median
		case rowKubectl:
			p.Kubectl = r.Median
		case rowLeasesProto, rowPodsProto:
			p.Floor += r.Median.Wall
		}
	}
	return p
}

// PageRow is locks -A's median wall time and requests at one page size.
type PageRow struct {
	PageSize int64 // negative: one unpaged list
	Median   Measurement
}

// pageSizes measures the engine of locks -A in-process with pages of 500
// (kubectl's chunk size), 5,000 and none, interleaved, through clients
// built as the plugin builds them (protobuf for built-in types).
func pageSizes(ctx context.Context, bed *testbed.Cluster, runs int, log io.Writer) ([]PageRow, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", bed.Kubeconfig)
	if err != nil {
		return nil, err
	}
	var requests atomic.Int64
	cfg.QPS, cfg.Burst = 50, 100
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			requests.Add(1)
			return rt.RoundTrip(r)
		})
	})
	built, err := inspect.ForConfig(cfg)
	if err != nil {
		return nil, err
	}
	sizes := []int64{500, 5000, -1}
	results := make([][]Measurement, len(sizes))
	for run := 0; run < runs; run++ {
		for n, size := range sizes {
			in := &inspect.Inspector{Client: built.Client, Metadata: built.Metadata, Dynamic: built.Dynamic, PageSize: size}
			requests.Store(0)
			start := time.Now()
			if _, err := in.Locks(ctx, inspect.Scope{}); err != nil {
				return nil, err
			}
			m := Measurement{Wall: time.Since(start), Requests: int(requests.Load())}
			fmt.Fprintf(log, "page size %-6d run %d: %s, %d requests\n", size, run+1, m.Wall.Round(time.Millisecond), m.Requests)
			results[n] = append(results[n], m)
		}
	}
	out := make([]PageRow, len(sizes))
	for n, size := range sizes {
		out[n] = PageRow{PageSize: size, Median: median(results[n])}
	}
	return out, nil
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
