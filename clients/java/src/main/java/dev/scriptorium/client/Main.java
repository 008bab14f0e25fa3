package dev.scriptorium.client;

import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import scriptorium.v1.Retrieval.ContentMode;
import scriptorium.v1.Retrieval.Corpus;
import scriptorium.v1.Retrieval.GetContentResponse;
import scriptorium.v1.Retrieval.SearchRequest;
import scriptorium.v1.Retrieval.SearchResponse;
import scriptorium.v1.Retrieval.SearchResult;

/**
 * A small command line over the client.
 *
 * <pre>
 * Main [--target HOST:PORT] health
 * Main [--target HOST:PORT] search QUERY...
 * Main [--target HOST:PORT] get LOCATION
 * Main [--target HOST:PORT] canon QUERY MISSING_LOCATION
 * </pre>
 *
 * <p>canon prints one JSON object (the proto JSON mapping, proto field names, defaults included)
 * of a code search (top 5), a full fetch of its first result by ref_id and a fetch of a missing
 * location: what the cross-client test (tests/e2e/test_clients_agree.py) compares.
 */
public final class Main {
  private static final JsonFormat.Printer JSON =
      JsonFormat.printer().preservingProtoFieldNames().alwaysPrintFieldsWithNoPresence();

  private Main() {}

  public static void main(String[] argv) throws IOException {
    List<String> args = new ArrayList<>(List.of(argv));
    String target = ScriptoriumClient.defaultTarget();
    if (args.size() >= 2 && args.get(0).equals("--target")) {
      target = args.get(1);
      args = args.subList(2, args.size());
    }
    if (args.isEmpty()) {
      usage();
    }
    String command = args.get(0);
    List<String> rest = args.subList(1, args.size());
    try (ScriptoriumClient client = ScriptoriumClient.connect(target)) {
      switch (command) {
        case "health" -> System.out.println(client.health(""));
        case "search" -> search(client, String.join(" ", rest));
        case "get" -> get(client, String.join(" ", rest));
        case "canon" -> canon(client, rest);
        default -> usage();
      }
    } catch (ScriptoriumException failed) {
      System.err.println(failed.code() + ": " + failed.description());
      failed.resolution().ifPresent(res -> {
        System.err.println("  resolution: " + res.getReason() + " (rule " + res.getRule() + ")");
        res.getCandidatesList().forEach(c -> System.err.println("  candidate: " + c));
      });
      System.exit(1);
    }
  }

  private static void usage() {
    System.err.println("usage: Main [--target HOST:PORT] health|search|get|canon ...");
    System.exit(2);
  }

  private static void search(ScriptoriumClient client, String query) {
    SearchResponse found = client.search(query, 5);
    int rank = 1;
    for (SearchResult r : found.getResultsList()) {
      System.out.printf("%d. %s  [%s, score %.3f]%n   %s%n", rank++, r.getLocation(),
          r.getSource(), r.getScore(), r.getPreview());
    }
    if (found.getResultsCount() == 0) {
      System.out.println("no results");
    }
  }

  private static void get(ScriptoriumClient client, String location) {
    GetContentResponse page = client.getByLocation(location, ContentMode.CONTENT_MODE_FULL);
    System.out.printf("%s (lines %d-%d of %d, resolved by %s)%n%s%n", page.getLocation(),
        page.getStartLine(), page.getEndLine(), page.getTotalLines(),
        page.getResolution().getRule(), page.getContent());
  }

  private static void canon(ScriptoriumClient client, List<String> args) throws IOException {
    if (args.size() != 2) {
      usage();
    }
    SearchResponse found = client.search(SearchRequest.newBuilder().setQuery(args.get(0))
        .setTopK(5).addKinds(Corpus.CORPUS_CODE).build());
    if (found.getResultsCount() == 0) {
      throw new IllegalStateException("no results for " + args.get(0));
    }
    GetContentResponse content =
        client.getByRef(found.getResults(0).getRefId(), ContentMode.CONTENT_MODE_FULL);
    ScriptoriumException failed;
    try {
      client.getByLocation(args.get(1), ContentMode.CONTENT_MODE_FULL);
      throw new IllegalStateException("fetching " + args.get(1) + " did not fail");
    } catch (ScriptoriumException expected) {
      failed = expected;
    }
    String resolution = failed.resolution().map(Main::json).orElse("null");
    System.out.println("{\"search\": " + json(found) + ", \"content\": " + json(content)
        + ", \"missing\": {\"code\": " + failed.code().value()
        + ", \"resolution\": " + resolution + "}}");
  }

  private static String json(MessageOrBuilder message) {
    try {
      return JSON.print(message);
    } catch (IOException unprintable) {
      throw new IllegalStateException(unprintable);
    }
  }
}
