package main

// A real `gpuadmit serve` behind the webhook configurations `gpuadmit render` prints, as the
// API server's webhook plugins call it: TLS verified against the caBundle (dev certificates
// from `gpuadmit certs --san 127.0.0.1`), AdmissionReview v1, the JSON Patch applied by the
// plugin. The one change to the rendered configurations: clientConfig.service (the in-cluster
// Service, resolved by the API server to the Service's endpoints) becomes a url to the local
// server with the same path.

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Gpuadmit runs the gpuadmit binary's commands.
type Gpuadmit struct {
	Binary string
	Certs  string // directory with ca.crt, tls.crt, tls.key
}

// NewGpuadmit makes dev certificates for 127.0.0.1 in dir.
func NewGpuadmit(binary, dir string) (*Gpuadmit, error) {
	g := &Gpuadmit{Binary: binary, Certs: filepath.Join(dir, "certs")}
	if _, err := g.run(nil, "certs", "--service", "gpuadmit", "--namespace", "gpuadmit",
		"--out", g.Certs, "--san", "127.0.0.1"); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *Gpuadmit) run(stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command(g.Binary, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("gpuadmit %v: %v: %s", args, err, stderr.String())
	}
	return out, nil
}

// Render runs `gpuadmit render` with extra arguments and decodes its documents.
func (g *Gpuadmit) Render(policy string, extra ...string) ([]runtime.Object, error) {
	args := append([]string{"render", "--policy", policy}, extra...)
	out, err := g.run(nil, args...)
	if err != nil {
		return nil, err
	}
	docs, err := ReadDocuments(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("gpuadmit render output: %w", err)
	}
	var objs []runtime.Object
	for _, d := range docs {
		o, err := Decode(d)
		if err != nil {
			return nil, fmt.Errorf("gpuadmit render output: %w", err)
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// Server is one running `gpuadmit serve`.
type Server struct {
	cmd  *exec.Cmd
	URL  string // https://127.0.0.1:PORT
	logs *bytes.Buffer
}

// Serve starts `gpuadmit serve` with the policy on a free port and waits until /readyz answers.
func (g *Gpuadmit) Serve(policy string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "https://127.0.0.1:" + strconv.Itoa(port), logs: &bytes.Buffer{}}
	s.cmd = exec.Command(g.Binary, "serve", "--policy", policy,
		"--tls-cert", filepath.Join(g.Certs, "tls.crt"), "--tls-key", filepath.Join(g.Certs, "tls.key"),
		"--listen", "127.0.0.1:"+strconv.Itoa(port), "--metrics-listen", "off",
		"--shutdown-delay", "0", "--log-level", "warn")
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	client, err := g.client()
	if err != nil {
		s.Stop()
		return nil, err
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := client.Get(s.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Stop()
	return nil, fmt.Errorf("gpuadmit serve --policy %s: not ready within 20 s: %s", policy, s.logs.String())
}

func (g *Gpuadmit) client() (*http.Client, error) {
	ca, err := os.ReadFile(filepath.Join(g.Certs, "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("no certificate in %s/ca.crt", g.Certs)
	}
	return &http.Client{Timeout: 2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}, nil
}

// Stop ends the server (SIGTERM, then SIGKILL after 5 s).
func (s *Server) Stop() {
	if s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WebhookConfigurations renders the policy's webhook configurations (caBundle: the dev CA)
// and points them at the server.
func (g *Gpuadmit) WebhookConfigurations(policy string, s *Server) ([]runtime.Object, error) {
	objs, err := g.Render(policy, "--ca-bundle", filepath.Join(g.Certs, "ca.crt"))
	if err != nil {
		return nil, err
	}
	var out []runtime.Object
	for _, o := range objs {
		switch c := o.(type) {
		case *admissionv1.MutatingWebhookConfiguration:
			for i := range c.Webhooks {
				if err := pointAt(&c.Webhooks[i].ClientConfig, s.URL); err != nil {
					return nil, err
				}
			}
			out = append(out, c)
		case *admissionv1.ValidatingWebhookConfiguration:
			for i := range c.Webhooks {
				if err := pointAt(&c.Webhooks[i].ClientConfig, s.URL); err != nil {
					return nil, err
				}
			}
			out = append(out, c)
		}
	}
	if len(out) != 2 {
		return nil, fmt.Errorf("gpuadmit render --policy %s printed %d webhook configurations, want 2", policy, len(out))
	}
	return out, nil
}

func pointAt(c *admissionv1.WebhookClientConfig, base string) error {
	if c.Service == nil || c.Service.Path == nil {
		return fmt.Errorf("webhook clientConfig without service.path")
	}
	if len(c.CABundle) == 0 {
		return fmt.Errorf("webhook clientConfig without caBundle")
	}
	u := base + *c.Service.Path
	c.URL, c.Service = &u, nil
	return nil
}

var _ = context.Background
