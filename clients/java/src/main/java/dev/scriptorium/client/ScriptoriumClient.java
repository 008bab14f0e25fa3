package dev.scriptorium.client;

import io.grpc.CallCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import scriptorium.v1.Retrieval.ContentMode;
import scriptorium.v1.Retrieval.ExpandRelatedRequest;
import scriptorium.v1.Retrieval.ExpandRelatedResponse;
import scriptorium.v1.Retrieval.GetContentRequest;
import scriptorium.v1.Retrieval.GetContentResponse;
import scriptorium.v1.Retrieval.GuideImplementationRequest;
import scriptorium.v1.Retrieval.GuideImplementationResponse;
import scriptorium.v1.Retrieval.ListSourcesRequest;
import scriptorium.v1.Retrieval.ListSourcesResponse;
import scriptorium.v1.Retrieval.SearchRequest;
import scriptorium.v1.Retrieval.SearchResponse;
import scriptorium.v1.Retrieval.SummarizeFlowRequest;
import scriptorium.v1.Retrieval.SummarizeFlowResponse;
import scriptorium.v1.RetrievalServiceGrpc;
import scriptorium.v1.RetrievalServiceGrpc.RetrievalServiceBlockingStub;

/**
 * A small blocking client for the Scriptorium retrieval daemon.
 *
 * <p>It wraps the stubs generated from {@code proto/} with the conventions every Scriptorium
 * client shares: the target defaults to {@code $SCRIPTORIUM_TARGET}, then {@code
 * 127.0.0.1:50051}; a token goes out as {@code authorization: Bearer <token>} (default {@code
 * $SCRIPTORIUM_TOKEN}); every call has a deadline; a failed call throws {@link
 * ScriptoriumException} with the Resolution decoded. Messages are the generated ones, unchanged.
 */
public final class ScriptoriumClient implements AutoCloseable {
  public static final String DEFAULT_ADDRESS = "127.0.0.1:50051";
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

  private final ManagedChannel channel;
  private final boolean ownsChannel;
  private final RetrievalServiceBlockingStub retrieval;
  private final HealthGrpc.HealthBlockingStub health;
  private final Duration timeout;

  private ScriptoriumClient(Builder builder) {
    this.ownsChannel = builder.channel == null;
    this.channel = ownsChannel
        ? ManagedChannelBuilder.forTarget(builder.target).usePlaintext().build()
        : builder.channel;
    this.timeout = builder.timeout;
    RetrievalServiceBlockingStub stub = RetrievalServiceGrpc.newBlockingStub(channel);
    HealthGrpc.HealthBlockingStub check = HealthGrpc.newBlockingStub(channel);
    if (builder.token != null && !builder.token.isEmpty()) {
      BearerToken bearer = new BearerToken(builder.token);
      stub = stub.withCallCredentials(bearer);
      check = check.withCallCredentials(bearer);
    }
    this.retrieval = stub;
    this.health = check;
  }

  /** A plaintext client of {@code target} with the default token and timeout. */
  public static ScriptoriumClient connect(String target) {
    return builder().target(target).build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** {@code $SCRIPTORIUM_TARGET}, else {@link #DEFAULT_ADDRESS}. */
  public static String defaultTarget() {
    String target = System.getenv("SCRIPTORIUM_TARGET");
    return target == null || target.isEmpty() ? DEFAULT_ADDRESS : target;
  }

  /** Ranked references with snippets, previews, scores and lineage. */
  public SearchResponse search(SearchRequest request) {
    return call("Search", stub -> stub.search(request));
  }

  /** The best {@code topK} results for {@code query} over docs and code. */
  public SearchResponse search(String query, int topK) {
    return search(SearchRequest.newBuilder().setQuery(query).setTopK(topK).build());
  }

  /** The block, file or page behind a ref_id or a location. */
  public GetContentResponse getContent(GetContentRequest request) {
    return call("GetContent", stub -> stub.getContent(request));
  }

  /** The content behind a ref_id from an earlier answer. */
  public GetContentResponse getByRef(String refId, ContentMode mode) {
    return getContent(GetContentRequest.newBuilder().setRefId(refId).setMode(mode).build());
  }

  /** The content at a location (a search result's location, or a path). */
  public GetContentResponse getByLocation(String location, ContentMode mode) {
    return getContent(GetContentRequest.newBuilder().setLocation(location).setMode(mode).build());
  }

  /** Supporting docs and code for seed refs, each with scored reasons. */
  public ExpandRelatedResponse expandRelated(ExpandRelatedRequest request) {
    return call("ExpandRelated", stub -> stub.expandRelated(request));
  }

  /** A deterministic list of steps from refs (or a topic). */
  public SummarizeFlowResponse summarizeFlow(SummarizeFlowRequest request) {
    return call("SummarizeFlow", stub -> stub.summarizeFlow(request));
  }

  /** Search, expansion and flow composed into one grounded guide. */
  public GuideImplementationResponse guideImplementation(GuideImplementationRequest request) {
    return call("GuideImplementation", stub -> stub.guideImplementation(request));
  }

  /** Every configured source with its state, counts and freshness. */
  public ListSourcesResponse listSources() {
    return call("ListSources", stub -> stub.listSources(ListSourcesRequest.getDefaultInstance()));
  }

  /**
   * The serving status of {@code service} ("" is the whole daemon): NOT_SERVING until the
   * sources are loaded and while the daemon drains; an unknown service throws NOT_FOUND.
   */
  public HealthCheckResponse.ServingStatus health(String service) {
    HealthCheckRequest request = HealthCheckRequest.newBuilder().setService(service).build();
    try {
      return health.withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
          .check(request)
          .getStatus();
    } catch (StatusRuntimeException error) {
      throw new ScriptoriumException("Health.Check", error);
    }
  }

  /** Closes the channel this client opened (a channel given to the builder stays open). */
  @Override
  public void close() {
    if (ownsChannel) {
      channel.shutdownNow();
    }
  }

  private <T> T call(String method, Function<RetrievalServiceBlockingStub, T> rpc) {
    try {
      return rpc.apply(retrieval.withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS));
    } catch (StatusRuntimeException error) {
      throw new ScriptoriumException(method, error);
    }
  }

  /** How a client is set up: target, token, timeout, or a channel of the caller's (TLS). */
  public static final class Builder {
    private String target = defaultTarget();
    private String token = System.getenv("SCRIPTORIUM_TOKEN");
    private Duration timeout = DEFAULT_TIMEOUT;
    private ManagedChannel channel;

    private Builder() {}

    public Builder target(String target) {
      this.target = target;
      return this;
    }

    public Builder token(String token) {
      this.token = token;
      return this;
    }

    public Builder timeout(Duration timeout) {
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("the timeout must be positive, not " + timeout);
      }
      this.timeout = timeout;
      return this;
    }

    /** Use this channel (for example one built with TLS credentials) instead of plaintext. */
    public Builder channel(ManagedChannel channel) {
      this.channel = channel;
      return this;
    }

    public ScriptoriumClient build() {
      return new ScriptoriumClient(this);
    }
  }

  /** {@code authorization: Bearer <token>} on every call. */
  private static final class BearerToken extends CallCredentials {
    private static final Metadata.Key<String> AUTHORIZATION =
        Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private final String token;

    BearerToken(String token) {
      this.token = token;
    }

    @Override
    public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
      Metadata headers = new Metadata();
      headers.put(AUTHORIZATION, "Bearer " + token);
      applier.apply(headers);
    }
  }
}
