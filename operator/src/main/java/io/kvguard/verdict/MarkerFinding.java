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
   * @param longest the most units (token IDs, or words) in any one list or text scanned; fewer than
   *     {@link ProbeMarker#SYMBOLS} could never hold a marker, and the phrase says so rather than
   *     let "no marker" read as evidence (the probe asks for one output token)
   */
  record HeldNoOther(boolean own, int longest) implements MarkerFinding {
    @Override
    public String phrase() {
      String base = "the answer held no other probe's marker";
      if (own) {
        return base + " (it held its own prompt's marker)";
      }
      return longest < ProbeMarker.SYMBOLS
          ? base
              + " (it carried "
              + longest
              + (longest == 1 ? " token or word" : " tokens or words")
              + ", too few to hold one: this is no evidence either way)"
          : base;
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
