package io.kvguard.cli;

import io.kvguard.probe.WireCapture;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * {@code check --record DIR}: what the probes sent and read, and the verdict, written so a bug
 * report can carry it and the test suite can replay it as an engine fixture. For each request
 * {@code NN-<path>-request.txt} (request line, headers, body) and, when an answer came, {@code
 * NN-<path>-<status>.http} (a raw HTTP/1.1 answer as under {@code src/test/resources/engines/});
 * {@code verdict.json} is the report {@code --output json} prints; {@code SOURCE.md} names every
 * file and what it holds. Everything passes through {@link SecretRedaction} first, and no file is
 * ever overwritten.
 */
final class CheckRecord {
  private CheckRecord() {}

  /**
   * Refuses a DIR that holds anything already, before a single request is sent: a record is never
   * mixed with or written over another.
   */
  static Path target(String name) throws UsageException {
    Path dir = Path.of(name);
    if (Files.isSymbolicLink(dir)) {
      // Followed, the record would land wherever the link points (or, dangling, be created
      // there): a link planted in a shared directory would take it.
      throw new UsageException(
          "--record "
              + name
              + " is a symbolic link: name a new or empty directory itself, not a link to one");
    }
    if (Files.exists(dir) && !Files.isDirectory(dir)) {
      throw new UsageException("--record " + name + " is a file: name a new or empty directory");
    }
    if (Files.isDirectory(dir)) {
      try (Stream<Path> entries = Files.list(dir)) {
        if (entries.findAny().isPresent()) {
          throw new UsageException(
              "--record "
                  + name
                  + " is not empty: name a new or empty directory (a record is never written over"
                  + " another)");
        }
      } catch (IOException e) {
        throw new UsageException(
            "--record " + name + " cannot be read (" + e.getClass().getSimpleName() + ")");
      }
    }
    return dir;
  }

  /**
   * Writes the record; every file is created new, so a record written into the same directory at
   * the same time fails rather than mixing with it.
   *
   * @param command check's arguments, as the user gave them
   * @param verdictJson the report as {@code --output json} prints it
   */
  static void write(
      Path dir,
      List<String> command,
      String engine,
      List<WireCapture.Exchange> exchanges,
      String verdictJson,
      SecretRedaction redaction)
      throws IOException {
    Files.createDirectories(dir);
    List<String> index = new ArrayList<>();
    int n = 0;
    for (WireCapture.Exchange exchange : exchanges) {
      n++;
      String stem = String.format(Locale.ROOT, "%02d-%s", n, slug(exchange.uri().getPath()));
      String request = stem + "-request.txt";
      create(dir.resolve(request), request(exchange, redaction));
      index.add(
          "- `"
              + request
              + "`: "
              + exchange.method()
              + " "
              + redaction.text(requestTarget(exchange))
              + " as sent"
              + bodyNote(exchange.requestBody()));
      if (exchange.status() >= 0) {
        String answer = stem + "-" + exchange.status() + ".http";
        create(dir.resolve(answer), answer(exchange, redaction));
        index.add(
            "- `"
                + answer
                + "`: its answer, HTTP "
                + exchange.status()
                + bodyNote(exchange.answerBody())
                + exchange
                    .failure()
                    .map(f -> "; reading it failed: " + redaction.text(f))
                    .orElse(""));
      } else {
        index.add(
            "  (no answer: " + redaction.text(exchange.failure().orElse("none was read")) + ")");
      }
    }
    create(
        dir.resolve("verdict.json"), redaction.text(verdictJson).getBytes(StandardCharsets.UTF_8));
    index.add("- `verdict.json`: the report `check --output json` prints, exit code included");
    String source =
        "Recorded by `kvguard check --record` ("
            + engine
            + ") at "
            + Instant.now().truncatedTo(ChronoUnit.SECONDS)
            + "; to keep it as a test fixture, make this line cite the engine's source (`Derived"
            + " from <owner>/<repository> `<path>` at <version>`, src/test/resources/engines/README.md)."
            + " API keys and credential headers are replaced by "
            + SecretRedaction.MARK
            + "; bodies are kept up to "
            + WireCapture.DEFAULT_BODY_CAP
            + " bytes.\n\nCommand: `kvguard check "
            + redaction.text(String.join(" ", command))
            + "`\n\n"
            + String.join("\n", index)
            + "\n";
    create(dir.resolve("SOURCE.md"), source.getBytes(StandardCharsets.UTF_8));
  }

  private static String bodyNote(WireCapture.Body body) {
    if (body.total() == 0) {
      return "";
    }
    return body.cut()
        ? ", body cut at " + body.bytes().length + " of " + body.total() + " bytes"
        : ", body " + body.total() + " bytes";
  }

  private static byte[] request(WireCapture.Exchange exchange, SecretRedaction redaction)
      throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    line(out, exchange.method() + " " + redaction.text(requestTarget(exchange)) + " HTTP/1.1");
    line(out, "host: " + exchange.uri().getRawAuthority());
    headers(out, exchange.requestHeaders(), redaction);
    line(out, "");
    out.write(redaction.bytes(exchange.requestBody().bytes(), exchange.requestBody().cut()));
    return out.toByteArray();
  }

  /** The request line's target: path and query as sent. */
  private static String requestTarget(WireCapture.Exchange exchange) {
    String path = exchange.uri().getRawPath();
    String query = exchange.uri().getRawQuery();
    return (path == null || path.isEmpty() ? "/" : path) + (query == null ? "" : "?" + query);
  }

  private static byte[] answer(WireCapture.Exchange exchange, SecretRedaction redaction)
      throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    line(out, "HTTP/1.1 " + exchange.status());
    headers(out, exchange.answerHeaders(), redaction);
    line(out, "");
    out.write(redaction.bytes(exchange.answerBody().bytes(), exchange.answerBody().cut()));
    return out.toByteArray();
  }

  private static void headers(
      ByteArrayOutputStream out, Map<String, List<String>> headers, SecretRedaction redaction)
      throws IOException {
    for (Map.Entry<String, List<String>> header : headers.entrySet()) {
      for (String value : header.getValue()) {
        line(out, header.getKey() + ": " + redaction.header(header.getKey(), value));
      }
    }
  }

  private static void line(ByteArrayOutputStream out, String line) throws IOException {
    out.write((line + "\r\n").getBytes(StandardCharsets.UTF_8));
  }

  /** A file name part from a request path: {@code /v1/models} becomes {@code v1-models}. */
  static String slug(String path) {
    String slug =
        path.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-|-$", "");
    slug = slug.length() > 40 ? slug.substring(0, 40) : slug;
    return slug.isEmpty() ? "root" : slug;
  }

  private static void create(Path file, byte[] bytes) throws IOException {
    try (OutputStream out =
        Files.newOutputStream(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      out.write(bytes);
    }
  }
}
