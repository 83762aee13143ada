package io.kvguard.faults;

/**
 * Builds engine JSON from literals dropped in verbatim, so a fault row can put any token where a
 * figure belongs.
 */
final class JsonLiterals {
  /** Passed instead of a literal to leave the field out. */
  static final String OMIT = "<omit>";

  private JsonLiterals() {}

  /** {@code "name":literal,} or nothing for {@link #OMIT}. */
  static String field(String name, String literal) {
    return OMIT.equals(literal) ? "" : "\"" + name + "\":" + literal + ",";
  }
}
