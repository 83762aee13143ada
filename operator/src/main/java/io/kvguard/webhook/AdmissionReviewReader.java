package io.kvguard.webhook;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import io.kvguard.gate.GateNames;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Reads an AdmissionReview v1 token by token and keeps only a {@link PodAdmission}: everything else
 * is skipped unread, so a review costs the memory of its body (bounded by {@link
 * WebhookServer#MAX_REQUEST_BYTES}) and of what is kept (bounded here), whatever it holds. Reading
 * the whole body into a tree, as the webhook did, cost about 100 bytes of heap per {@code {}}: one
 * 8 MiB review from any pod ended the operator's 256 MiB JVM (docs/reliability.md, attack 2).
 *
 * <p>It reads as Jackson's tree did (the decision must not change): the last of repeated keys
 * counts, scalars read as their text, a missing or non-object member is empty.
 */
public final class AdmissionReviewReader {
  /**
   * Labels kept for the selectors. Kubernetes has no count limit, so a stored pod can carry more;
   * such a pod is admitted without the gate (outcome error), its kvguard labels still removed.
   */
  public static final int MAX_LABELS = 1024;

  /** Kubernetes' own limits (a DNS-1123 subdomain prefix, '/', a 63-character name; 63). */
  static final int MAX_LABEL_KEY_CHARS = 253 + 1 + 63;

  static final int MAX_LABEL_VALUE_CHARS = 63;

  /**
   * A second line behind the body cap and the skipping, for what is read at all: a pod's JSON is
   * about 20 levels deep (managedFields included) and holds no number of more than 20 digits; the
   * longest string read is a label or a name (a skipped string, an 8 MiB environment variable, is
   * never buffered); names beyond 64 KiB are no pod's.
   */
  static final StreamReadConstraints CONSTRAINTS =
      StreamReadConstraints.builder()
          .maxDocumentLength(WebhookServer.MAX_REQUEST_BYTES)
          .maxNestingDepth(64)
          .maxNumberLength(256)
          .maxStringLength(64 * 1024)
          .maxNameLength(64 * 1024)
          .build();

  /**
   * Field names are not canonicalized: the symbol table would otherwise keep every distinct key of
   * the review (a million junk keys, a million strings) for the length of the parse.
   */
  private static final JsonFactory FACTORY =
      JsonFactory.builder()
          .disable(JsonFactory.Feature.CANONICALIZE_FIELD_NAMES)
          .disable(JsonFactory.Feature.INTERN_FIELD_NAMES)
          .streamReadConstraints(CONSTRAINTS)
          .build();

  private static final Set<String> KVGUARD_LABELS =
      Set.of(GateNames.VERIFIED_LABEL, GateNames.CONTEXT_LENGTH_LABEL);

  /** The body is not a review this reader can keep; {@link #uid} is the request's if read first. */
  public static final class UnreadableReview extends Exception {
    private final String uid;

    UnreadableReview(String uid, Throwable cause) {
      super(cause.getMessage(), cause);
      this.uid = uid;
    }

    /** The request's uid, empty when it came after the fault or not at all. */
    public String uid() {
      return uid;
    }
  }

  private final JsonParser parser;
  private String uidRead = "";

  private AdmissionReviewReader(JsonParser parser) {
    this.parser = parser;
  }

  public static PodAdmission read(byte[] body) throws UnreadableReview {
    AdmissionReviewReader reader = null;
    try (JsonParser parser = FACTORY.createParser(body)) {
      reader = new AdmissionReviewReader(parser);
      return reader.review();
    } catch (IOException | RuntimeException e) {
      throw new UnreadableReview(reader == null ? "" : reader.uidRead, e);
    }
  }

  private PodAdmission review() throws IOException {
    if (parser.nextToken() != JsonToken.START_OBJECT) {
      // Not a review at all (the decision refuses it for want of a uid); nothing after is read.
      return new PodAdmission("", "", "", "", PodAdmission.Kind.NONE, "", null);
    }
    String apiVersion = "";
    PodAdmission request = new PodAdmission("", "", "", "", PodAdmission.Kind.NONE, "", null);
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      String field = parser.currentName();
      parser.nextToken();
      switch (field) {
        case "apiVersion" -> apiVersion = text();
        case "request" -> request = request();
        default -> parser.skipChildren();
      }
    }
    return new PodAdmission(
        apiVersion,
        request.uid(),
        request.namespace(),
        request.operation(),
        request.kind(),
        request.subResource(),
        request.pod());
  }

  private PodAdmission request() throws IOException {
    String uid = "";
    String namespace = "";
    String operation = "";
    PodAdmission.Kind kind = PodAdmission.Kind.NONE;
    String subResource = "";
    PodAdmission.Pod pod = null;
    if (!isObject()) {
      return new PodAdmission("", uid, namespace, operation, kind, subResource, pod);
    }
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      String field = parser.currentName();
      parser.nextToken();
      switch (field) {
        case "uid" -> uidRead = uid = text();
        case "namespace" -> namespace = text();
        case "operation" -> operation = text();
        case "kind" -> kind = kind();
        case "subResource" -> subResource = text();
        case "object" -> pod = pod();
        default -> parser.skipChildren();
      }
    }
    return new PodAdmission("", uid, namespace, operation, kind, subResource, pod);
  }

  private PodAdmission.Kind kind() throws IOException {
    String group = "";
    String version = "";
    String kind = "";
    if (!isObject()) {
      return PodAdmission.Kind.NONE;
    }
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      String field = parser.currentName();
      parser.nextToken();
      switch (field) {
        case "group" -> group = text();
        case "version" -> version = text();
        case "kind" -> kind = text();
        default -> parser.skipChildren();
      }
    }
    return new PodAdmission.Kind(group, version, kind);
  }

  private PodAdmission.Pod pod() throws IOException {
    if (!isObject()) {
      return null;
    }
    Metadata metadata = Metadata.NONE;
    Spec spec = null;
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      String field = parser.currentName();
      parser.nextToken();
      switch (field) {
        case "metadata" -> metadata = metadata();
        case "spec" -> spec = spec();
        default -> parser.skipChildren();
      }
    }
    return new PodAdmission.Pod(
        metadata.name,
        metadata.generateName,
        metadata.labels,
        metadata.labelsTruncated,
        spec != null,
        spec != null && spec.gatesListed,
        spec != null && spec.gateDeclared);
  }

  private record Metadata(
      String name, String generateName, Map<String, String> labels, boolean labelsTruncated) {
    static final Metadata NONE = new Metadata("", "", Map.of(), false);
  }

  private Metadata metadata() throws IOException {
    if (!isObject()) {
      return Metadata.NONE;
    }
    String name = "";
    String generateName = "";
    Metadata labels = Metadata.NONE;
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      String field = parser.currentName();
      parser.nextToken();
      switch (field) {
        case "name" -> name = text();
        case "generateName" -> generateName = text();
        case "labels" -> labels = labels();
        default -> parser.skipChildren();
      }
    }
    return new Metadata(name, generateName, labels.labels, labels.labelsTruncated);
  }

  /** The labels, in a Metadata without names; non-string values are not labels (as before). */
  private Metadata labels() throws IOException {
    if (!isObject()) {
      return Metadata.NONE;
    }
    Map<String, String> labels = new LinkedHashMap<>();
    boolean truncated = false;
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      String key = parser.currentName();
      if (parser.nextToken() != JsonToken.VALUE_STRING) {
        labels.remove(key);
        parser.skipChildren();
        continue;
      }
      if (labels.size() >= MAX_LABELS
          && !labels.containsKey(key)
          && !KVGUARD_LABELS.contains(key)) {
        truncated = true;
        continue;
      }
      String value = parser.getText();
      if (key.length() > MAX_LABEL_KEY_CHARS || value.length() > MAX_LABEL_VALUE_CHARS) {
        // The API server refuses such a pod after admission; nothing is lost by not reading it.
        throw new IOException("label longer than Kubernetes allows: " + key.length() + " chars");
      }
      labels.put(key, value);
    }
    return new Metadata("", "", labels, truncated);
  }

  private record Spec(boolean gatesListed, boolean gateDeclared) {}

  private Spec spec() throws IOException {
    if (!isObject()) {
      return null;
    }
    Spec spec = new Spec(false, false);
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      String field = parser.currentName();
      parser.nextToken();
      if (field.equals("readinessGates")) {
        JsonToken token = parser.currentToken();
        spec = new Spec(token == JsonToken.START_ARRAY, gateDeclared());
      } else {
        parser.skipChildren();
      }
    }
    return spec;
  }

  /**
   * Whether any element (of a list, or value of an object, as the tree iterated) names the gate.
   */
  private boolean gateDeclared() throws IOException {
    JsonToken token = parser.currentToken();
    if (token != JsonToken.START_ARRAY && token != JsonToken.START_OBJECT) {
      return false;
    }
    JsonToken end = token == JsonToken.START_ARRAY ? JsonToken.END_ARRAY : JsonToken.END_OBJECT;
    boolean declared = false;
    for (JsonToken next = parser.nextToken(); next != end; next = parser.nextToken()) {
      if (next == null) {
        throw new IOException("review ends inside spec.readinessGates");
      }
      if (next == JsonToken.FIELD_NAME) {
        continue;
      }
      if (next != JsonToken.START_OBJECT) {
        parser.skipChildren();
        continue;
      }
      String conditionType = "";
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String field = parser.currentName();
        parser.nextToken();
        if (field.equals("conditionType")) {
          conditionType = text();
        } else {
          parser.skipChildren();
        }
      }
      declared |= GateNames.CONDITION_TYPE.equals(conditionType);
    }
    return declared;
  }

  private boolean isObject() throws IOException {
    if (parser.currentToken() == JsonToken.START_OBJECT) {
      return true;
    }
    parser.skipChildren();
    return false;
  }

  /** A scalar's text as the tree's asText gave it; a list, an object or null is empty. */
  private String text() throws IOException {
    JsonToken token = parser.currentToken();
    if (token.isScalarValue() && token != JsonToken.VALUE_NULL) {
      return parser.getText();
    }
    parser.skipChildren();
    return "";
  }
}
