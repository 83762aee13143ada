package io.kvguard.verdict;

/**
 * What an engine did with a prompt just above its admission limit. An answer's body is never kept:
 * it may hold another tenant's data. Only its length and a hash survive, for correlation.
 */
public sealed interface RejectionOutcome {

  /**
   * The engine's own admission error, recognised by status and error shape from the engine's
   * source.
   *
   * @param status the HTTP status the engine answered
   * @param errorClass the engine's name for the error (e.g. TGI's error_type {@code validation},
   *     llama.cpp's {@code exceed_context_size_error}), or the name of the check that refused;
   *     kvguard's own words, never the engine's payload
   */
  record Refused(int status, String errorClass, long promptTokens) implements RejectionOutcome {
    public Refused {
      java.util.Objects.requireNonNull(errorClass, "errorClass");
    }
  }

  /**
   * Nothing was proven: an answer that is not the engine's refusal (a proxy's 4xx, an HTTP layer's
   * 413, an unrecognised body), or a prompt that could not reach the rejection path from where it
   * was sent. {@code cause} names what happened and what to change; it is safe to show.
   */
  record Inconclusive(String cause, long promptTokens) implements RejectionOutcome {}

  /**
   * The engine answered 2xx (or began streaming) or 5xx: the prompt went down a path it must not
   * take.
   *
   * @param meaning what such an answer is known to mean for this engine ("" when nothing more is
   *     known)
   */
  record Answered(
      int status,
      long bodyBytes,
      String bodySha256,
      long promptTokens,
      boolean streamed,
      String meaning)
      implements RejectionOutcome {
    public Answered(
        int status, long bodyBytes, String bodySha256, long promptTokens, boolean streamed) {
      this(status, bodyBytes, bodySha256, promptTokens, streamed, "");
    }
  }

  /** No answer could be had (timeout, connection error); {@code cause} is safe to show. */
  record Failed(String cause) implements RejectionOutcome {}
}
