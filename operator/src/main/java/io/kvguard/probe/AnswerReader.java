package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * Reads one answer's body as it streams in, keeping what its {@link Reading} selects: a JSON answer
 * through {@link SelectiveJson}, a Prometheus page through {@link PrometheusText#read}, anything
 * else as its head, length and SHA-256. A body that cannot be parsed is kept as the reason, which
 * the probe gets when it asks for the structure; transport failures (the byte cap, the deadline, a
 * reset) are thrown.
 */
final class AnswerReader {
  private AnswerReader() {}

  static EngineResponse read(
      String path, int status, String contentType, InputStream body, Reading reading)
      throws IOException {
    CountingStream in = new CountingStream(body);
    EngineResponse shape = new EngineResponse(path, status, contentType, new byte[0]);
    if (shape.isJson() && reading.selectsJson()) {
      JsonNode json = null;
      ProbeException unreadable = null;
      try {
        json = readJson(path, in, reading.jsonPaths());
      } catch (ProbeException e) {
        unreadable = e;
      }
      return new EngineResponse(
          path,
          status,
          contentType,
          in.count,
          EngineResponse.Kept.JSON,
          new byte[0],
          null,
          json,
          null,
          unreadable);
    }
    if (shape.isPrometheusText() && reading.selectsMetrics()) {
      PrometheusText.Kept kept = null;
      ProbeException unreadable = null;
      try {
        kept = PrometheusText.read(in, reading);
      } catch (ProbeException e) {
        unreadable = e;
      }
      return new EngineResponse(
          path,
          status,
          contentType,
          in.count,
          EngineResponse.Kept.PROMETHEUS,
          new byte[0],
          null,
          null,
          kept,
          unreadable);
    }
    MessageDigest digest = sha256();
    byte[] head = new byte[Reading.RAW_HEAD_BYTES];
    int kept = 0;
    byte[] chunk = new byte[8192];
    for (int read = in.read(chunk); read >= 0; read = in.read(chunk)) {
      digest.update(chunk, 0, read);
      int room = Math.min(read, head.length - kept);
      System.arraycopy(chunk, 0, head, kept, room);
      kept += room;
    }
    return new EngineResponse(
        path,
        status,
        contentType,
        in.count,
        EngineResponse.Kept.RAW,
        java.util.Arrays.copyOf(head, kept),
        HexFormat.of().formatHex(digest.digest()),
        null,
        null,
        null);
  }

  /**
   * The selected JSON of {@code in} (null when it holds no value), or a failure naming the path and
   * the cause.
   */
  static JsonNode readJson(String path, InputStream in, List<Reading.JsonPath> paths)
      throws IOException, ProbeException {
    try {
      return SelectiveJson.read(in, paths);
    } catch (SelectiveJson.Refused e) {
      throw new ProbeException("GET " + path + " answered " + e.getMessage());
    } catch (SelectiveJson.Malformed e) {
      String where = e.byteOffset < 0 ? "?" : "byte " + e.byteOffset;
      if (e.duplicateKey) {
        throw new ProbeException(
            "GET " + path + " answered malformed JSON: a key appears twice (at " + where + ")");
      }
      throw new ProbeException("GET " + path + " answered malformed JSON (at " + where + ")");
    }
  }

  static String sha256(byte[] body) {
    MessageDigest digest = sha256();
    return HexFormat.of().formatHex(digest.digest(body));
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  private static final class CountingStream extends FilterInputStream {
    long count;

    CountingStream(InputStream in) {
      super(in);
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      if (b >= 0) {
        count++;
      }
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int n = super.read(b, off, len);
      if (n > 0) {
        count += n;
      }
      return n;
    }
  }
}
