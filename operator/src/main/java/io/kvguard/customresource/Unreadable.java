package io.kvguard.customresource;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A part of a stored ModelDeployment (its spec or its status) that kvguard's classes cannot hold:
 * stored before the CRD had bounds (a real API server keeps such objects through later CRD
 * changes), written against an older CRD, or corrupt. Carried instead of the part's content so that
 * one such object is that object's problem, not the informer's (issue 29).
 *
 * @param field where reading failed, as a path from the object's root, e.g.
 *     spec.roles[0].minReadyPods
 * @param problem why, in Jackson's words, e.g. "Numeric value (3000000000) out of range of int"
 * @param original the part as stored, written back unchanged whenever kvguard serializes the object
 *     (a patch computed against it must never rewrite what it could not read)
 */
public record Unreadable(String field, String problem, JsonNode original) {
  /** One line for logs, Events and the status: "spec.roles[0].minReadyPods: Numeric value ...". */
  public String describe() {
    return field + ": " + problem;
  }
}
