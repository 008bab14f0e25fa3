// Package scriptorium is a small typed client for the Scriptorium retrieval daemon.
//
// It wraps the stubs generated from proto/ (package scriptoriumv1, aliased pb below) with the
// conventions every Scriptorium client shares: the target defaults to $SCRIPTORIUM_TARGET, then
// 127.0.0.1:50051; a token goes out as "authorization: Bearer <token>" metadata (default
// $SCRIPTORIUM_TOKEN); every call gets a deadline; and a failed call is an *Error carrying the
// gRPC code and, for GetContent, the scriptorium.v1.Resolution the daemon attached to the status.
// Requests and responses are the generated messages, unchanged.
package scriptorium

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "scriptorium/clients/go/scriptoriumv1"
)

// DefaultAddress is where a daemon listens when nothing else is said.
const DefaultAddress = "127.0.0.1:50051"

// DefaultTimeout bounds a call whose context has no deadline of its own.
const DefaultTimeout = 30 * time.Second

// DefaultTarget is $SCRIPTORIUM_TARGET, else DefaultAddress.
func DefaultTarget() string {
	if target := os.Getenv("SCRIPTORIUM_TARGET"); target != "" {
		return target
	}
	return DefaultAddress
}

type options struct {
	token   string
	timeout time.Duration
	creds   credentials.TransportCredentials
	dial    []grpc.DialOption
}

// Option changes how New connects.
type Option func(*options)

// WithToken sends "authorization: Bearer <token>" on every call (default $SCRIPTORIUM_TOKEN).
func WithToken(token string) Option { return func(o *options) { o.token = token } }

// WithTimeout is the deadline of a call whose context has none (default 30 s).
func WithTimeout(timeout time.Duration) Option { return func(o *options) { o.timeout = timeout } }

// WithTransportCredentials speaks TLS instead of plaintext.
func WithTransportCredentials(creds credentials.TransportCredentials) Option {
	return func(o *options) { o.creds = creds }
}

// WithDialOptions passes raw grpc-go dial options through.
func WithDialOptions(dial ...grpc.DialOption) Option {
	return func(o *options) { o.dial = append(o.dial, dial...) }
}

// Client calls one daemon over one channel; it is safe for concurrent use.
type Client struct {
	conn    *grpc.ClientConn
	rpc     pb.RetrievalServiceClient
	health  healthpb.HealthClient
	token   string
	timeout time.Duration
}

// New opens a channel to target ("" means DefaultTarget()). It does not wait for the daemon:
// the first call does, within its deadline.
func New(target string, opts ...Option) (*Client, error) {
	o := options{
		token:   os.Getenv("SCRIPTORIUM_TOKEN"),
		timeout: DefaultTimeout,
		creds:   insecure.NewCredentials(),
	}
	for _, opt := range opts {
		opt(&o)
	}
	if o.timeout <= 0 {
		return nil, fmt.Errorf("scriptorium: the timeout must be positive, not %s", o.timeout)
	}
	if target == "" {
		target = DefaultTarget()
	}
	dial := append([]grpc.DialOption{grpc.WithTransportCredentials(o.creds)}, o.dial...)
	conn, err := grpc.NewClient(target, dial...)
	if err != nil {
		return nil, fmt.Errorf("scriptorium: cannot use target %q: %w", target, err)
	}
	return &Client{
		conn:    conn,
		rpc:     pb.NewRetrievalServiceClient(conn),
		health:  healthpb.NewHealthClient(conn),
		token:   o.token,
		timeout: o.timeout,
	}, nil
}

// Close closes the channel; calls still under way fail with CANCELED.
func (c *Client) Close() error { return c.conn.Close() }

// Search returns ranked references with snippets, previews, scores and lineage.
func (c *Client) Search(ctx context.Context, req *pb.SearchRequest) (*pb.SearchResponse, error) {
	return call(c, ctx, "Search", c.rpc.Search, req)
}

// GetContent fetches the block, file or page behind req.RefId or req.Location.
func (c *Client) GetContent(
	ctx context.Context, req *pb.GetContentRequest,
) (*pb.GetContentResponse, error) {
	return call(c, ctx, "GetContent", c.rpc.GetContent, req)
}

// GetByRef fetches the content behind a ref_id from an earlier answer.
func (c *Client) GetByRef(
	ctx context.Context, refID string, mode pb.ContentMode,
) (*pb.GetContentResponse, error) {
	return c.GetContent(ctx, &pb.GetContentRequest{RefId: refID, Mode: mode})
}

// GetByLocation fetches the content at a location (a search result's Location, or a path).
func (c *Client) GetByLocation(
	ctx context.Context, location string, mode pb.ContentMode,
) (*pb.GetContentResponse, error) {
	return c.GetContent(ctx, &pb.GetContentRequest{Location: location, Mode: mode})
}

// ExpandRelated finds supporting docs and code for seed refs, each with scored reasons.
func (c *Client) ExpandRelated(
	ctx context.Context, req *pb.ExpandRelatedRequest,
) (*pb.ExpandRelatedResponse, error) {
	return call(c, ctx, "ExpandRelated", c.rpc.ExpandRelated, req)
}

// SummarizeFlow turns refs (or a topic) into a deterministic list of steps.
func (c *Client) SummarizeFlow(
	ctx context.Context, req *pb.SummarizeFlowRequest,
) (*pb.SummarizeFlowResponse, error) {
	return call(c, ctx, "SummarizeFlow", c.rpc.SummarizeFlow, req)
}

// GuideImplementation composes search, expansion and flow into one grounded guide.
func (c *Client) GuideImplementation(
	ctx context.Context, req *pb.GuideImplementationRequest,
) (*pb.GuideImplementationResponse, error) {
	return call(c, ctx, "GuideImplementation", c.rpc.GuideImplementation, req)
}

// ListSources reports every configured source with its state, counts and freshness.
func (c *Client) ListSources(ctx context.Context) (*pb.ListSourcesResponse, error) {
	return call(c, ctx, "ListSources", c.rpc.ListSources, &pb.ListSourcesRequest{})
}

// Health is the serving status of service ("" means the whole daemon). The daemon is
// NOT_SERVING until its sources are loaded and while it drains; an unknown service is an *Error
// with code NotFound.
func (c *Client) Health(
	ctx context.Context, service string,
) (healthpb.HealthCheckResponse_ServingStatus, error) {
	resp, err := call(c, ctx, "Health.Check", c.health.Check,
		&healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		return healthpb.HealthCheckResponse_UNKNOWN, err
	}
	return resp.GetStatus(), nil
}

// call runs one unary RPC with the client's token and default deadline, and turns a failure
// into an *Error.
func call[Req, Resp any](
	c *Client,
	ctx context.Context,
	method string,
	rpc func(context.Context, Req, ...grpc.CallOption) (Resp, error),
	req Req,
) (Resp, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	if c.token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+c.token)
	}
	resp, err := rpc(ctx, req)
	if err != nil {
		var zero Resp
		return zero, newError(method, err)
	}
	return resp, nil
}

// Error is a failed call: the gRPC code and message, and the Resolution the daemon attached
// when it said how it tried to resolve a location (nil otherwise).
type Error struct {
	Method     string
	Code       codes.Code
	Message    string
	Resolution *pb.Resolution
	status     *status.Status
}

func newError(method string, err error) *Error {
	st := status.Convert(err)
	return &Error{
		Method:     method,
		Code:       st.Code(),
		Message:    st.Message(),
		Resolution: ResolutionOf(st),
		status:     st,
	}
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s failed: %s: %s", e.Method, e.Code, e.Message)
}

// GRPCStatus lets status.FromError and status.Code see through an *Error.
func (e *Error) GRPCStatus() *status.Status { return e.status }

// ResolutionOf is the scriptorium.v1.Resolution among a status's details, or nil.
func ResolutionOf(st *status.Status) *pb.Resolution {
	for _, detail := range st.Details() {
		if res, ok := detail.(*pb.Resolution); ok {
			return res
		}
	}
	return nil
}

// AsError is err as an *Error when it is one (or wraps one).
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
