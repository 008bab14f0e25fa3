package dev.scriptorium.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import scriptorium.v1.Retrieval.Confidence;
import scriptorium.v1.Retrieval.ContentMode;
import scriptorium.v1.Retrieval.ExpandRelatedRequest;
import scriptorium.v1.Retrieval.ExpandRelatedResponse;
import scriptorium.v1.Retrieval.GetContentResponse;
import scriptorium.v1.Retrieval.GuideImplementationRequest;
import scriptorium.v1.Retrieval.GuideImplementationResponse;
import scriptorium.v1.Retrieval.ListSourcesResponse;
import scriptorium.v1.Retrieval.RefKind;
import scriptorium.v1.Retrieval.Resolution;
import scriptorium.v1.Retrieval.SearchResponse;
import scriptorium.v1.Retrieval.SearchResult;
import scriptorium.v1.Retrieval.SourceState;
import scriptorium.v1.Retrieval.SourceStatus;
import scriptorium.v1.Retrieval.SummarizeFlowRequest;
import scriptorium.v1.Retrieval.SummarizeFlowResponse;

/** The client against a real daemon serving two Markdown files to callers with a token. */
class ScriptoriumClientTest {
  private static final String TOKEN = "lantern-token";
  private static final Map<String, String> CORPUS = Map.of(
      "guide/lantern-setup.md", String.join("\n",
          "# Lantern setup", "", "Lanterns light the reading room after dusk.", "",
          "## Trimming the wick", "",
          "Trim the quillowick to a quarter inch before lighting, then replace the glass chimney.",
          "A trimmed quillowick burns evenly and does not smoke.", "",
          "## Refilling oil", "", "Refill the reservoir with clean lamp oil once a week.", ""),
      "shelving.md", String.join("\n",
          "# Shelving", "", "Manuscripts are shelved by accession number, oldest first.", "",
          "## Oversized volumes", "", "Folios taller than the shelf lie flat on the bottom row.",
          ""));

  private static Daemon daemon;
  private static ScriptoriumClient client;

  @BeforeAll
  static void start() throws Exception {
    daemon = Daemon.serve(CORPUS, TOKEN);
    client = ScriptoriumClient.builder().target(daemon.address).token(TOKEN).build();
  }

  @AfterAll
  static void stop() throws Exception {
    if (client != null) {
      client.close();
    }
    if (daemon != null) {
      daemon.close();
    }
  }

  private static SearchResult lanternHit() {
    SearchResponse found = client.search("quillowick", 5);
    return found.getResultsList().stream()
        .filter(r -> r.getLocation().contains("lantern-setup"))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no result names lantern-setup: " + found));
  }

  @Test
  void healthIsServing() {
    assertEquals(ServingStatus.SERVING, client.health(""));
    assertEquals(ServingStatus.SERVING, client.health("scriptorium.v1.RetrievalService"));
    ScriptoriumException unknown =
        assertThrows(ScriptoriumException.class, () -> client.health("no.such.Service"));
    assertEquals(Status.Code.NOT_FOUND, unknown.code());
  }

  @Test
  void searchFindsTheWordOnlyOnePageHas() {
    SearchResult hit = lanternHit();
    assertFalse(hit.getRefId().isEmpty());
    assertEquals(RefKind.REF_KIND_DOC, hit.getKind());
    assertTrue((hit.getSnippet() + hit.getPreview()).contains("quillowick"), hit.toString());
  }

  @Test
  void getContentByRefAndByLocation() {
    SearchResult hit = lanternHit();
    GetContentResponse byRef = client.getByRef(hit.getRefId(), ContentMode.CONTENT_MODE_FULL);
    assertTrue(byRef.getContent().contains("quarter inch"), byRef.toString());
    assertEquals(hit.getRefId(), byRef.getRefId());
    GetContentResponse byLocation =
        client.getByLocation(hit.getLocation(), ContentMode.CONTENT_MODE_FULL);
    assertEquals(byRef.getContent(), byLocation.getContent());
    assertEquals(hit.getLocation(), byLocation.getLocation());
    assertEquals("resolved", byLocation.getResolution().getReason());
  }

  @Test
  void aMissingLocationCarriesTheResolution() {
    ScriptoriumException failed = assertThrows(ScriptoriumException.class,
        () -> client.getByLocation("guide/no-such-page", ContentMode.CONTENT_MODE_FULL));
    assertEquals(Status.Code.NOT_FOUND, failed.code());
    assertEquals("GetContent", failed.method());
    assertFalse(failed.description().isEmpty());
    Resolution resolution =
        failed.resolution().orElseThrow(() -> new AssertionError("no Resolution decoded"));
    assertEquals("not_found", resolution.getReason());
    assertEquals("guide/no-such-page", resolution.getRequestedLocation());
  }

  @Test
  void composingCalls() {
    SearchResult hit = lanternHit();
    ExpandRelatedResponse related = client.expandRelated(
        ExpandRelatedRequest.newBuilder().addRefIds(hit.getRefId()).build());
    assertEquals(0, related.getUnresolvedRefIdsCount(), related.toString());
    SummarizeFlowResponse flow = client.summarizeFlow(SummarizeFlowRequest.newBuilder()
        .addRefIds(hit.getRefId()).setTopic("lantern care").build());
    assertTrue(flow.getFlowCount() > 0, flow.toString());
    assertNotEquals(Confidence.CONFIDENCE_UNSPECIFIED, flow.getConfidence());
    GuideImplementationResponse guide = client.guideImplementation(
        GuideImplementationRequest.newBuilder().setTopic("trim a lantern quillowick").build());
    assertFalse(guide.getQuery().isEmpty());
    assertTrue(guide.getDocsCount() > 0, guide.toString());
  }

  @Test
  void listSources() {
    ListSourcesResponse sources = client.listSources();
    assertTrue(sources.getSourcesCount() > 0);
    long documents = 0;
    for (SourceStatus source : sources.getSourcesList()) {
      assertEquals(SourceState.SOURCE_STATE_READY, source.getState(), source.toString());
      documents += source.getDocumentCount();
    }
    assertEquals(CORPUS.size(), documents, sources.toString());
  }

  @Test
  void aCallWithoutTheTokenIsRefused() {
    try (ScriptoriumClient anonymous =
        ScriptoriumClient.builder().target(daemon.address).token("").build()) {
      ScriptoriumException refused =
          assertThrows(ScriptoriumException.class, () -> anonymous.search("quillowick", 1));
      assertEquals(Status.Code.UNAUTHENTICATED, refused.code());
      assertEquals(ServingStatus.SERVING, anonymous.health(""), "health needs no token");
    }
  }

  @Test
  void anUnreachableDaemonIsUnavailable() throws Exception {
    try (ScriptoriumClient nowhere = ScriptoriumClient.builder().target("127.0.0.1:1")
        .timeout(java.time.Duration.ofSeconds(10)).build()) {
      ScriptoriumException failed =
          assertThrows(ScriptoriumException.class, () -> nowhere.search("quillowick", 1));
      assertEquals(Status.Code.UNAVAILABLE, failed.code());
      assertTrue(failed.resolution().isEmpty());
    }
  }
}
