package scriptorium_test

// The client against a real daemon: TestMain writes two Markdown files and a configuration that
// requires a token, starts `python -P -m scriptorium serve` from the repository's .venv (or
// $SCRIPTORIUM_PYTHON) on a free loopback port, and waits for its ready file, which the daemon
// writes once its health is SERVING (it holds the bound port).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	scriptorium "scriptorium/clients/go"
	pb "scriptorium/clients/go/scriptoriumv1"
)

const (
	readyWait = 120 * time.Second
	token     = "lantern-token"
)

var target string

var corpus = map[string]string{
	"guide/lantern-setup.md": `# Lantern setup

Lanterns light the reading room after dusk.

## Trimming the wick

Trim the quillowick to a quarter inch before lighting, then replace the glass chimney.
A trimmed quillowick burns evenly and does not smoke.

## Refilling oil

Refill the reservoir with clean lamp oil once a week.
`,
	"shelving.md": `# Shelving

Manuscripts are shelved by accession number, oldest first.

## Oversized volumes

Folios taller than the shelf lie flat on the bottom row.
`,
}

func TestMain(m *testing.M) {
	work, err := os.MkdirTemp("", "scriptorium-go-")
	if err != nil {
		panic(err)
	}
	stop, address, err := startDaemon(work)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(work)
		os.Exit(1)
	}
	target = address
	code := m.Run()
	stop()
	os.RemoveAll(work)
	os.Exit(code)
}

func python() string {
	if exe := os.Getenv("SCRIPTORIUM_PYTHON"); exe != "" {
		return exe
	}
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	return filepath.Join(repo, ".venv", "bin", "python")
}

// startDaemon serves a fresh corpus under work and returns once the ready file names its port,
// with a stop that sends SIGTERM (the daemon drains) and waits for the exit.
func startDaemon(work string) (func(), string, error) {
	root := filepath.Join(work, "corpus")
	for name, text := range corpus {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, "", err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return nil, "", err
		}
	}
	config := filepath.Join(work, "scriptorium.toml")
	settings := fmt.Sprintf("[server]\nwatch = false\nauth_token = %q\n\n[[sources]]\n"+
		"name = \"docs\"\nkind = \"markdown\"\nroot = %q\ndefault = true\n", token, root)
	if err := os.WriteFile(config, []byte(settings), 0o644); err != nil {
		return nil, "", err
	}
	ready := filepath.Join(work, "ready")
	logPath := filepath.Join(work, "daemon.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, "", err
	}
	defer logFile.Close()
	cmd := exec.Command(python(), "-P", "-m", "scriptorium", "serve", "--config", config,
		"--listen", "127.0.0.1:0", "--ready-file", ready,
		"--state-dir", filepath.Join(work, "state"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1")
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("cannot start %s (run `make venv` first): %w", python(), err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(readyWait)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if text, err := os.ReadFile(ready); err == nil {
			if port, err := strconv.Atoi(strings.TrimSpace(string(text))); err == nil && port > 0 {
				stop := func() {
					_ = cmd.Process.Signal(syscall.SIGTERM)
					<-exited
				}
				return stop, fmt.Sprintf("127.0.0.1:%d", port), nil
			}
		}
		select {
		case err := <-exited:
			return nil, "", fmt.Errorf("the daemon exited before it was ready (%v):\n%s", err,
				tail(logPath))
		case <-deadline:
			_ = cmd.Process.Kill()
			return nil, "", fmt.Errorf("the daemon was not ready after %s:\n%s", readyWait,
				tail(logPath))
		case <-tick.C:
		}
	}
}

func tail(path string) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(string(data), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}

func newClient(t *testing.T, opts ...scriptorium.Option) *scriptorium.Client {
	t.Helper()
	client, err := scriptorium.New(target, append([]scriptorium.Option{
		scriptorium.WithToken(token), scriptorium.WithTimeout(30 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// lanternHit is the search result for the word only the lantern page contains.
func lanternHit(t *testing.T, client *scriptorium.Client) *pb.SearchResult {
	t.Helper()
	found, err := client.Search(context.Background(), &pb.SearchRequest{Query: "quillowick", TopK: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range found.GetResults() {
		if strings.Contains(r.GetLocation(), "lantern-setup") {
			return r
		}
	}
	t.Fatalf("no result names lantern-setup: %v", found.GetResults())
	return nil
}

func TestHealthIsServing(t *testing.T) {
	client := newClient(t)
	for _, service := range []string{"", "scriptorium.v1.RetrievalService"} {
		got, err := client.Health(context.Background(), service)
		if err != nil || got != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health(%q) = %v, %v; want SERVING", service, got, err)
		}
	}
	_, err := client.Health(context.Background(), "no.such.Service")
	if e, ok := scriptorium.AsError(err); !ok || e.Code != codes.NotFound {
		t.Fatalf("health of an unknown service: %v, want NotFound", err)
	}
}

func TestSearchFindsTheWordOnlyOnePageHas(t *testing.T) {
	hit := lanternHit(t, newClient(t))
	if hit.GetRefId() == "" || hit.GetKind() != pb.RefKind_REF_KIND_DOC {
		t.Fatalf("want a doc ref with an id, got %v", hit)
	}
	if !strings.Contains(hit.GetSnippet()+hit.GetPreview(), "quillowick") {
		t.Fatalf("neither snippet nor preview shows the word: %v", hit)
	}
}

func TestGetContentByRefAndByLocation(t *testing.T) {
	client := newClient(t)
	ctx := context.Background()
	hit := lanternHit(t, client)
	byRef, err := client.GetByRef(ctx, hit.GetRefId(), pb.ContentMode_CONTENT_MODE_FULL)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(byRef.GetContent(), "quarter inch") || byRef.GetRefId() != hit.GetRefId() {
		t.Fatalf("fetch by ref: %v", byRef)
	}
	byLocation, err := client.GetByLocation(ctx, hit.GetLocation(), pb.ContentMode_CONTENT_MODE_FULL)
	if err != nil {
		t.Fatal(err)
	}
	if byLocation.GetContent() != byRef.GetContent() || byLocation.GetLocation() != hit.GetLocation() {
		t.Fatalf("by location %q differs from by ref %q", byLocation.GetContent(), byRef.GetContent())
	}
	if byLocation.GetResolution().GetReason() != "resolved" {
		t.Fatalf("resolution of a found location: %v", byLocation.GetResolution())
	}
}

func TestMissingLocationCarriesTheResolution(t *testing.T) {
	_, err := newClient(t).GetByLocation(context.Background(), "guide/no-such-page",
		pb.ContentMode_CONTENT_MODE_FULL)
	e, ok := scriptorium.AsError(err)
	if !ok {
		t.Fatalf("want an *Error, got %v", err)
	}
	if e.Code != codes.NotFound || e.Method != "GetContent" || e.Message == "" {
		t.Fatalf("want NotFound from GetContent with a message, got %v", e)
	}
	if e.Resolution == nil {
		t.Fatal("the Resolution detail was not decoded")
	}
	if e.Resolution.GetReason() != "not_found" ||
		e.Resolution.GetRequestedLocation() != "guide/no-such-page" {
		t.Fatalf("resolution: %v", e.Resolution)
	}
	if status.Code(err) != codes.NotFound {
		t.Fatalf("status.Code does not see through *Error: %v", status.Code(err))
	}
}

func TestComposingCalls(t *testing.T) {
	client := newClient(t)
	ctx := context.Background()
	hit := lanternHit(t, client)
	related, err := client.ExpandRelated(ctx, &pb.ExpandRelatedRequest{RefIds: []string{hit.GetRefId()}})
	if err != nil {
		t.Fatal(err)
	}
	if len(related.GetUnresolvedRefIds()) != 0 {
		t.Fatalf("a ref from search was not resolved: %v", related)
	}
	flow, err := client.SummarizeFlow(ctx, &pb.SummarizeFlowRequest{
		RefIds: []string{hit.GetRefId()}, Topic: "lantern care"})
	if err != nil {
		t.Fatal(err)
	}
	if len(flow.GetFlow()) == 0 || flow.GetConfidence() == pb.Confidence_CONFIDENCE_UNSPECIFIED {
		t.Fatalf("flow of the lantern page: %v", flow)
	}
	guide, err := client.GuideImplementation(ctx, &pb.GuideImplementationRequest{
		Topic: "trim a lantern quillowick"})
	if err != nil {
		t.Fatal(err)
	}
	if guide.GetQuery() == "" || len(guide.GetDocs()) == 0 {
		t.Fatalf("guide: %v", guide)
	}
}

func TestListSources(t *testing.T) {
	sources, err := newClient(t).ListSources(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(sources.GetSources()) == 0 {
		t.Fatal("no sources")
	}
	documents := int64(0)
	for _, s := range sources.GetSources() {
		if s.GetState() != pb.SourceState_SOURCE_STATE_READY {
			t.Fatalf("source not ready: %v", s)
		}
		documents += s.GetDocumentCount()
	}
	if documents != int64(len(corpus)) {
		t.Fatalf("%d documents, want the %d written: %v", documents, len(corpus), sources)
	}
}

func TestACancelledCallIsAnError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newClient(t).Search(ctx, &pb.SearchRequest{Query: "quillowick"})
	e, ok := scriptorium.AsError(err)
	if !ok || e.Code != codes.Canceled {
		t.Fatalf("a cancelled context: %v, want Canceled", err)
	}
	if !errors.As(err, new(*scriptorium.Error)) {
		t.Fatal("errors.As does not find *Error")
	}
}

func TestACallWithoutTheTokenIsRefused(t *testing.T) {
	client := newClient(t, scriptorium.WithToken(""))
	_, err := client.Search(context.Background(), &pb.SearchRequest{Query: "quillowick"})
	if e, ok := scriptorium.AsError(err); !ok || e.Code != codes.Unauthenticated {
		t.Fatalf("a search without the token: %v, want Unauthenticated", err)
	}
	if got, err := client.Health(context.Background(), ""); err != nil ||
		got != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health needs no token, got %v, %v", got, err)
	}
}
