package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;

/**
 * What kvguard kept of one engine answer: status, content type, length, and the part its {@link
 * Reading} selected (a JSON tree, Prometheus samples) or, for a raw reading, the head of the body
 * and the SHA-256 of all of it. The body itself is never held whole.
 */
public final class EngineResponse {
  /** How the body was read, which decides what of it is kept. */
  enum Kept {
    RAW,
    JSON,
    PROMETHEUS
  }

  private final String path;
  private final int status;
  private final String contentType;
  private final long length;
  private final Kept kept;
  private final byte[] head;
  private final String sha256;
  private final JsonNode json;
  private final PrometheusText.Kept prometheus;
  private final ProbeException unreadable;

  /** An answer as an engine sent it, whole (in-memory exchanges and tests); read like any other. */
  public EngineResponse(String path, int status, String contentType, byte[] body) {
    this(
        path,
        status,
        contentType,
        body.length,
        Kept.RAW,
        body.clone(),
        AnswerReader.sha256(body),
        null,
        null,
        null);
  }

  EngineResponse(
      String path,
      int status,
      String contentType,
      long length,
      Kept kept,
      byte[] head,
      String sha256,
      JsonNode json,
      PrometheusText.Kept prometheus,
      ProbeException unreadable) {
    this.path = path;
    this.status = status;
    this.contentType = contentType;
    this.length = length;
    this.kept = kept;
    this.head = head;
    this.sha256 = sha256;
    this.json = json;
    this.prometheus = prometheus;
    this.unreadable = unreadable;
  }

  public String path() {
    return path;
  }

  public int status() {
    return status;
  }

  public String contentType() {
    return contentType;
  }

  /** Bytes the answer's body had (as far as it was read). */
  public long length() {
    return length;
  }

  public boolean isEmpty() {
    return length == 0;
  }

  /**
   * The head of the body kept by a raw reading (all of it when {@link #complete()}); empty
   * otherwise.
   */
  public byte[] body() {
    return head.clone();
  }

  /** Whether {@link #body()} holds the whole body. */
  public boolean complete() {
    return head.length == length;
  }

  public String text() {
    return new String(head, StandardCharsets.UTF_8);
  }

  /** SHA-256 (hex) of the whole body, for a raw reading; null otherwise. */
  public String sha256() {
    return sha256;
  }

  public boolean isJson() {
    return contentType != null && contentType.toLowerCase(Locale.ROOT).contains("json");
  }

  /** Prometheus text exposition (text/plain; version=0.0.4) or OpenMetrics text. */
  public boolean isPrometheusText() {
    if (contentType == null) {
      return false;
    }
    String type = contentType.toLowerCase(Locale.ROOT);
    return type.startsWith("text/plain") || type.startsWith("application/openmetrics-text");
  }

  /**
   * The selected JSON (null for an empty body); a raw reading's head is parsed whole if it is the
   * whole body.
   */
  JsonNode json() throws ProbeException {
    if (unreadable != null) {
      throw unreadable;
    }
    switch (kept) {
      case JSON:
        return json;
      case RAW:
        try {
          return AnswerReader.readJson(path, headStream(), List.of(Reading.JsonPath.exact("")));
        } catch (IOException e) {
          throw new UncheckedIOException("reading bytes held in memory", e);
        }
      default:
        throw new ProbeException("GET " + path + " was read as Prometheus text, not JSON");
    }
  }

  /**
   * The selected Prometheus samples; a raw reading's head is parsed whole if it is the whole body.
   */
  PrometheusText.Kept prometheus() throws ProbeException {
    if (unreadable != null) {
      throw unreadable;
    }
    switch (kept) {
      case PROMETHEUS:
        return prometheus;
      case RAW:
        try {
          return PrometheusText.read(headStream(), null, null, null);
        } catch (IOException e) {
          throw new UncheckedIOException("reading bytes held in memory", e);
        }
      default:
        throw new ProbeException("GET " + path + " was read as JSON, not Prometheus text");
    }
  }

  private ByteArrayInputStream headStream() throws ProbeException {
    if (!complete()) {
      throw new ProbeException(
          "GET "
              + path
              + " answered "
              + length
              + " bytes, more than kvguard reads from an"
              + " answer it selects nothing from ("
              + Reading.RAW_HEAD_BYTES
              + ")");
    }
    return new ByteArrayInputStream(head);
  }
}
