package io.kvguard.verdict;

import java.util.List;

/**
 * What an engine did with a prompt just above its admission limit. An answer's body is never kept:
 * it may hold another tenant's data. Only its length, a hash (for correlation) and what a scan for
 * probe markers found survive.
 */
public sealed interface RejectionOutcome {

  /**
   * The engine's own admission error, recognised by status and error shape from the engine's
   * source.
   *
   * @param status the HTTP status the engine answered
   * @param errorClass the engine's name for the error (e.g. TGI's error_type {@code validation},
   *     llama.cpp's {@code exceed_context_size_error}), or the name of the check that refused;
   *     kvguard's own words, never the engine's payload. Where several prompts were sent (one per
   *     admission path), each path, its length and its class ({@link #ofPaths})
   * @param promptTokens the prompt's length; with several prompts, the length kvguard's single
   *     prompt would have had (it keys the probe and the record of the refusal)
   */
  record Refused(int status, String errorClass, long promptTokens) implements RejectionOutcome {
    /** Opens {@code errorClass} when it lists one refusal per admission path. */
    public static final String PATHS = "paths: ";

    /** Between the refusals of several paths in {@code errorClass}. */
    public static final String PATHS_JOINED = "; ";

    /** Between a path's description and the error class that refused it. */
    public static final String REFUSED_AS = " as ";

    /** The refusals of one prompt per admission path, in the order they were sent. */
    public static Refused ofPaths(int status, List<String> refusals, long keyTokens) {
      return new Refused(status, PATHS + String.join(PATHS_JOINED, refusals), keyTokens);
    }

    /** The error class of each path's refusal, in order; empty when this is no per-path record. */
    public List<String> pathClasses() {
      if (!severalPaths()) {
        return List.of();
      }
      return java.util.Arrays.stream(
              errorClass
                  .substring(PATHS.length())
                  .split(java.util.regex.Pattern.quote(PATHS_JOINED)))
          .map(part -> part.substring(part.lastIndexOf(REFUSED_AS) + REFUSED_AS.length()))
          .toList();
    }

    public Refused {
      java.util.Objects.requireNonNull(errorClass, "errorClass");
    }

    /**
     * Whether a recorded refusal is a per-path record of this build's probe: HTTP {@code status},
     * one refusal per path, each of a class in {@code known}, and every class in {@code required}
     * among them. A record of kvguard's single prompt from before issue 26 never is: it proved one
     * path only.
     */
    public static boolean perPathRecord(
        int recordedStatus,
        String recordedClass,
        int status,
        java.util.Set<String> known,
        java.util.Set<String> required) {
      Refused record = new Refused(recordedStatus, recordedClass, 0);
      List<String> classes = record.pathClasses();
      return recordedStatus == status
          && record.severalPaths()
          && !classes.isEmpty()
          && known.containsAll(classes)
          && classes.containsAll(required);
    }

    /** Whether this records the refusals of several prompts, one per admission path. */
    public boolean severalPaths() {
      return errorClass.startsWith(PATHS);
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
   * @param check the admission check ({@link ProbePrompt#check}) the prompt was sized for, "" where
   *     the engine's paths are not told apart
   * @param markers what the scan of the answer's content for probe markers found (issue 26 §4)
   */
  record Answered(
      int status,
      long bodyBytes,
      String bodySha256,
      long promptTokens,
      boolean streamed,
      String meaning,
      String check,
      MarkerFinding markers)
      implements RejectionOutcome {
    /** For an answer nobody scanned (built outside the probe). */
    static final MarkerFinding NOT_SCANNED =
        new MarkerFinding.Unchecked("the answer was not scanned");

    public Answered {
      java.util.Objects.requireNonNull(check, "check");
      java.util.Objects.requireNonNull(markers, "markers");
    }

    public Answered(
        int status,
        long bodyBytes,
        String bodySha256,
        long promptTokens,
        boolean streamed,
        String meaning,
        String check) {
      this(status, bodyBytes, bodySha256, promptTokens, streamed, meaning, check, NOT_SCANNED);
    }

    public Answered(
        int status,
        long bodyBytes,
        String bodySha256,
        long promptTokens,
        boolean streamed,
        String meaning) {
      this(status, bodyBytes, bodySha256, promptTokens, streamed, meaning, "");
    }

    public Answered(
        int status, long bodyBytes, String bodySha256, long promptTokens, boolean streamed) {
      this(status, bodyBytes, bodySha256, promptTokens, streamed, "");
    }
  }

  /** No answer could be had (timeout, connection error); {@code cause} is safe to show. */
  record Failed(String cause) implements RejectionOutcome {}
}
