package io.kvguard.testing;

import io.kvguard.testkit.FakeEngine;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Raw engine answers kept under {@code src/test/resources/engines/<engine>-<version>/} (status
 * line, headers, blank line, body), each folder citing its source in {@code SOURCE.md}.
 */
public final class EngineFixtures {
  private EngineFixtures() {}

  /**
   * The answer in {@code engines/<relativePath>}, e.g. {@code
   * tgi-3.3.7/generate-413-payload-limit.http}.
   */
  public static FakeEngine.Answer answer(String relativePath) {
    return parse(read(relativePath), relativePath);
  }

  /**
   * The answers of a {@code kvguard check --record} directory, by the path they answered, for a
   * {@link FakeEngine} to serve: each {@code NN-...-request.txt} (its request line names the path)
   * with its {@code NN-...-<status>.http}. A path answered twice must have been answered alike.
   */
  public static Map<String, FakeEngine.Answer> record(Path dir) {
    Map<String, FakeEngine.Answer> answers = new LinkedHashMap<>();
    try (Stream<Path> files = Files.list(dir)) {
      List<Path> all = files.sorted().toList();
      for (Path request : all) {
        String name = request.getFileName().toString();
        if (!name.endsWith("-request.txt")) {
          continue;
        }
        String stem = name.substring(0, name.length() - "-request.txt".length());
        String line =
            Files.readString(request, StandardCharsets.UTF_8).lines().findFirst().orElse("");
        String[] words = line.split(" ");
        if (words.length != 3 || !words[2].equals("HTTP/1.1")) {
          throw new IllegalArgumentException(request + ": not a request line: " + line);
        }
        Optional<Path> answer =
            all.stream()
                .filter(
                    f ->
                        f.getFileName()
                            .toString()
                            .matches(Pattern.quote(stem) + "-[0-9]{3}\\.http"))
                .findFirst();
        if (answer.isEmpty()) {
          continue;
        }
        FakeEngine.Answer parsed = parse(Files.readAllBytes(answer.get()), answer.get().toString());
        // A FakeEngine answers by path: the query, if any, is not part of it.
        String path =
            words[1].contains("?") ? words[1].substring(0, words[1].indexOf('?')) : words[1];
        FakeEngine.Answer before = answers.put(path, parsed);
        if (before != null
            && (before.status() != parsed.status()
                || !Arrays.equals(before.body(), parsed.body()))) {
          throw new IllegalArgumentException(
              dir + ": " + path + " was answered twice, differently");
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return answers;
  }

  static byte[] read(String relativePath) {
    try (InputStream in = EngineFixtures.class.getResourceAsStream("/engines/" + relativePath)) {
      if (in == null) {
        throw new IllegalArgumentException("no fixture engines/" + relativePath);
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Parses a raw HTTP/1.1 answer; fails on anything that is not one. */
  public static FakeEngine.Answer parse(byte[] raw, String name) {
    int end = indexOf(raw, "\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    if (end < 0) {
      throw new IllegalArgumentException(name + ": no blank line between headers and body");
    }
    String[] head = new String(raw, 0, end, StandardCharsets.US_ASCII).split("\r\n");
    String[] statusLine = head[0].split(" ", 3);
    if (statusLine.length < 2 || !statusLine[0].equals("HTTP/1.1")) {
      throw new IllegalArgumentException(name + ": not an HTTP/1.1 status line: " + head[0]);
    }
    int status = Integer.parseInt(statusLine[1]);
    String contentType = null;
    for (int i = 1; i < head.length; i++) {
      int colon = head[i].indexOf(':');
      if (colon < 1) {
        throw new IllegalArgumentException(name + ": malformed header line " + head[i]);
      }
      if (head[i].substring(0, colon).strip().toLowerCase(Locale.ROOT).equals("content-type")) {
        contentType = head[i].substring(colon + 1).strip();
      }
    }
    if (contentType == null) {
      throw new IllegalArgumentException(name + ": no content-type header");
    }
    return new FakeEngine.Answer(
        status, contentType, Arrays.copyOfRange(raw, end + 4, raw.length), 0);
  }

  private static int indexOf(byte[] data, byte[] pattern) {
    outer:
    for (int i = 0; i + pattern.length <= data.length; i++) {
      for (int j = 0; j < pattern.length; j++) {
        if (data[i + j] != pattern[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
