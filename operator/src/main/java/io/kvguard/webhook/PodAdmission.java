package io.kvguard.webhook;

import java.util.Map;

/**
 * What the webhook keeps of an AdmissionReview v1: the fields {@link GateInjection} decides on and
 * the log names, nothing else ({@link AdmissionReviewReader} skips the rest unread). Strings are
 * empty where the review has none.
 *
 * @param apiVersion the review's own apiVersion
 * @param kind the request's kind (group, version, kind of the object admitted)
 * @param pod the request's object, null when it is not a JSON object
 */
public record PodAdmission(
    String apiVersion,
    String uid,
    String namespace,
    String operation,
    Kind kind,
    String subResource,
    Pod pod) {

  /** The request's kind: {@code group} is empty for the core group (pods). */
  public record Kind(String group, String version, String kind) {
    static final Kind NONE = new Kind("", "", "");
  }

  /**
   * The admitted pod, as far as the decision reads it.
   *
   * @param labels its string-valued labels in order, at most {@link
   *     AdmissionReviewReader#MAX_LABELS} of them plus kvguard's own ({@link
   *     io.kvguard.gate.GateNames}), which are always kept so that they are removed however many
   *     labels come before them
   * @param labelsTruncated more labels than the map holds: selectors cannot be evaluated
   * @param hasSpec whether its spec is a JSON object
   * @param gatesListed whether spec.readinessGates is a list (a patch appends to it) rather than
   *     absent (a patch adds the list)
   * @param gateDeclared whether spec.readinessGates already names kvguard's condition type
   */
  public record Pod(
      String name,
      String generateName,
      Map<String, String> labels,
      boolean labelsTruncated,
      boolean hasSpec,
      boolean gatesListed,
      boolean gateDeclared) {}
}
