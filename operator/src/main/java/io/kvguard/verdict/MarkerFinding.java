package io.kvguard.verdict;

/**
 * What the scan of an answer found ({@link MarkerScan}): whether it held the marker of a prompt
 * other than the one it answered. Its phrase is what verdict messages say; it never names a
 * marker's value, the other probe's pod or its namespace.
 */
public sealed interface MarkerFinding {

  /** The phrase verdict messages append. */
  String phrase();

  /**
   * Another prompt's marker was in the answer: the engine answered from another request's KV.
   *
   * @param ownToo whether the prompt's own marker was there too
   */
  record HeldOther(boolean ownToo) implements MarkerFinding {
    @Override
    public String phrase() {
      return "the answer held another probe's marker (evidence of another request's KV)";
    }
  }

  /**
   * No other prompt's marker was in what could be scanned.
   *
   * @param own whether the prompt's own marker was there (an engine that echoes the prompt)
   */
  record HeldNoOther(boolean own) implements MarkerFinding {
    @Override
    public String phrase() {
      return "the answer held no other probe's marker"
          + (own ? " (it held its own prompt's marker)" : "");
    }
  }

  /** The answer's content could not be scanned; {@code why} is safe to show. */
  record Unchecked(String why) implements MarkerFinding {
    @Override
    public String phrase() {
      return "the answer's content could not be checked for markers (" + why + ")";
    }
  }
}
