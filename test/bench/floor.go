package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

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

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
