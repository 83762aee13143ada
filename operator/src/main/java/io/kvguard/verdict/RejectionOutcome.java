package io.kvguard.verdict;

/**
 * What an engine did with a prompt just above its admission limit. An answer's body is never kept: it may
 * hold another tenant's data. Only its length and a hash survive, for correlation.
 */
public sealed interface RejectionOutcome {

  /** HTTP 4xx; {@code namesLength} when the body names the length (or is the engine's documented error). */
  record Refused(int status, boolean namesLength, long promptTokens) implements RejectionOutcome {}

  /** The engine answered 2xx (or began streaming) or 5xx: the prompt went down a path it must not take. */
  record Answered(int status, long bodyBytes, String bodySha256, long promptTokens, boolean streamed)
      implements RejectionOutcome {}

  /** No answer could be had (timeout, connection error); {@code cause} is safe to show. */
  record Failed(String cause) implements RejectionOutcome {}
}
