package dev.scriptorium.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real {@code scriptorium serve} subprocess on a free loopback port, over files the test
 * writes, requiring {@code token} on every RetrievalService call. Ready means the daemon wrote its ready file (health SERVING, with the bound port); it
 * runs the repository's .venv Python unless {@code SCRIPTORIUM_PYTHON} names another.
 */
final class Daemon implements AutoCloseable {
  private static final Duration READY_WAIT = Duration.ofSeconds(120);

  private final Path work;
  private final Process process;
  private final Path log;
  final String address;

  private Daemon(Path work, Process process, Path log, String address) {
    this.work = work;
    this.process = process;
    this.log = log;
    this.address = address;
  }

  static Daemon serve(Map<String, String> files, String token)
      throws IOException, InterruptedException {
    Path work = Files.createTempDirectory("scriptorium-java-");
    Path corpus = work.resolve("corpus");
    for (Map.Entry<String, String> file : files.entrySet()) {
      Path path = corpus.resolve(file.getKey());
      Files.createDirectories(path.getParent());
      Files.writeString(path, file.getValue(), StandardCharsets.UTF_8);
    }
    Path config = work.resolve("scriptorium.toml");
    Files.writeString(config, "[server]\nwatch = false\nauth_token = \"" + token + "\"\n\n"
        + "[[sources]]\nname = \"docs\"\nkind = \"markdown\"\nroot = \"" + corpus + "\"\n"
        + "default = true\n", StandardCharsets.UTF_8);
    Path ready = work.resolve("ready");
    Path log = work.resolve("daemon.log");
    ProcessBuilder builder = new ProcessBuilder(List.of(python(), "-P", "-m", "scriptorium",
        "serve", "--config", config.toString(), "--listen", "127.0.0.1:0", "--ready-file", ready.toString(),
        "--state-dir", work.resolve("state").toString()));
    builder.environment().put("PYTHONUNBUFFERED", "1");
    builder.redirectErrorStream(true).redirectOutput(log.toFile());
    Process process = builder.start();
    Instant deadline = Instant.now().plus(READY_WAIT);
    while (true) {
      int port = port(ready);
      if (port > 0) {
        return new Daemon(work, process, log, "127.0.0.1:" + port);
      }
      if (process.waitFor(50, TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("the daemon exited with status " + process.exitValue()
            + " before it was ready:\n" + Files.readString(log));
      }
      if (Instant.now().isAfter(deadline)) {
        process.destroyForcibly();
        throw new IllegalStateException(
            "the daemon was not ready after " + READY_WAIT + ":\n" + Files.readString(log));
      }
    }
  }

  private static String python() {
    String python = System.getenv("SCRIPTORIUM_PYTHON");
    if (python != null && !python.isEmpty()) {
      return python;
    }
    String repo = System.getProperty("scriptorium.repo", "../..");
    return Path.of(repo, ".venv", "bin", "python").toAbsolutePath().normalize().toString();
  }

  private static int port(Path ready) {
    try {
      return Integer.parseInt(Files.readString(ready).trim());
    } catch (IOException | NumberFormatException notYet) {
      return 0;
    }
  }

  String log() throws IOException {
    return Files.readString(log);
  }

  /** SIGTERM (the daemon drains), then removes its files. */
  @Override
  public void close() throws IOException, InterruptedException {
    process.destroy();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
    try (Stream<Path> paths = Files.walk(work)) {
      paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    }
  }
}
