package io.kvguard.verdict;

import java.util.random.RandomGenerator;

/**
 * The content marker one rejection-probe prompt carries at its start (issue 26 §4): {@link
 * #SYMBOLS} symbols drawn from a random nonce, each one of {@link #ALPHABET}. Sent as token IDs
 * {@link #FIRST_TOKEN_ID}…{@code FIRST_TOKEN_ID + ALPHABET - 1} (small IDs present in every common
 * vocabulary, never the filler ID 100) or, to an engine that takes text only, as the words {@code "
 * b"} … {@code " z"} (never the filler {@code " a"}): each replaces one filler unit of the same
 * size, so the prompt's length in tokens and bytes stays what its path needs.
 *
 * <p>Its value is never shown: {@link #toString()} hides it, so no message or log can carry it.
 *
 * @param code the nonce, 0 ≤ code &lt; {@link #CODES}; symbol i is its i-th base-{@link #ALPHABET}
 *     digit
 */
public record ProbeMarker(long code) {
  /** Symbols per marker: 25^8 ≈ 1.5 × 10^11 markers, so a random one is unique among thousands. */
  public static final int SYMBOLS = 8;

  public static final int ALPHABET = 25;

  /** The token ID of symbol 0; the filler is 100, so a marker is never part of the filler. */
  public static final long FIRST_TOKEN_ID = 101;

  /** The word of symbol 0; the filler word is "a". */
  public static final char FIRST_LETTER = 'b';

  /** How many markers there are. */
  public static final long CODES = power(ALPHABET, SYMBOLS);

  public ProbeMarker {
    if (code < 0 || code >= CODES) {
      throw new IllegalArgumentException("a marker's code is in [0, " + CODES + ")");
    }
  }

  /** A marker drawn from {@code random}. */
  public static ProbeMarker drawn(RandomGenerator random) {
    return new ProbeMarker(random.nextLong(CODES));
  }

  /** Symbol {@code i} (0 ≤ i &lt; {@link #SYMBOLS}), 0 ≤ symbol &lt; {@link #ALPHABET}. */
  public int symbol(int i) {
    return (int) (code / power(ALPHABET, i) % ALPHABET);
  }

  /** The token ID that carries symbol {@code i}. */
  public long tokenId(int i) {
    return FIRST_TOKEN_ID + symbol(i);
  }

  /** The one-letter word that carries symbol {@code i}. */
  public String word(int i) {
    return String.valueOf((char) (FIRST_LETTER + symbol(i)));
  }

  /** The symbol a token ID carries, or -1 when it carries none. */
  static int symbolOfTokenId(long id) {
    return id >= FIRST_TOKEN_ID && id < FIRST_TOKEN_ID + ALPHABET
        ? (int) (id - FIRST_TOKEN_ID)
        : -1;
  }

  /** The symbol a word carries, or -1 when it carries none. */
  static int symbolOfWord(String word) {
    if (word.length() != 1) {
      return -1;
    }
    int symbol = word.charAt(0) - FIRST_LETTER;
    return symbol >= 0 && symbol < ALPHABET ? symbol : -1;
  }

  /** The code of the {@link #SYMBOLS} symbols starting at {@code from}. */
  static long codeOf(int[] symbols, int from) {
    long code = 0;
    for (int i = SYMBOLS - 1; i >= 0; i--) {
      code = code * ALPHABET + symbols[from + i];
    }
    return code;
  }

  @Override
  public String toString() {
    // A marker's value would let a reader of the logs forge or spot probes: never shown.
    return "ProbeMarker[hidden]";
  }

  private static long power(long base, int exponent) {
    long result = 1;
    for (int i = 0; i < exponent; i++) {
      result *= base;
    }
    return result;
  }
}
