package dev.scriptorium.client;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.util.Optional;
import scriptorium.v1.Retrieval.Resolution;

/**
 * A failed call: the gRPC status code and message, and the {@code scriptorium.v1.Resolution}
 * the daemon attached to the status when it said how it tried to resolve a location (a
 * GetContent that found nothing, or found several candidates).
 */
public final class ScriptoriumException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String method;
  private final Status.Code code;
  private final String description;
  private final transient Resolution resolution;

  ScriptoriumException(String method, StatusRuntimeException cause) {
    super(method + " failed: " + cause.getStatus().getCode() + ": "
        + nullToEmpty(cause.getStatus().getDescription()), cause);
    this.method = method;
    this.code = cause.getStatus().getCode();
    this.description = nullToEmpty(cause.getStatus().getDescription());
    this.resolution = resolutionOf(cause);
  }

  /** The RPC that failed, for example {@code GetContent}. */
  public String method() {
    return method;
  }

  /** The gRPC status code; only {@code UNAVAILABLE} is worth retrying. */
  public Status.Code code() {
    return code;
  }

  /** The daemon's message, which says what was wrong. */
  public String description() {
    return description;
  }

  /** How the daemon tried to resolve the location, when it said. */
  public Optional<Resolution> resolution() {
    return Optional.ofNullable(resolution);
  }

  /** The Resolution among the rich status details of {@code error}, or null. */
  static Resolution resolutionOf(Throwable error) {
    com.google.rpc.Status status = StatusProto.fromThrowable(error);
    if (status == null) {
      return null;
    }
    for (Any detail : status.getDetailsList()) {
      if (detail.is(Resolution.class)) {
        try {
          return detail.unpack(Resolution.class);
        } catch (InvalidProtocolBufferException malformed) {
          return null; // a malformed detail never hides the status itself
        }
      }
    }
    return null;
  }

  private static String nullToEmpty(String text) {
    return text == null ? "" : text;
  }
}
