package io.kvguard.probe;

import java.util.regex.Pattern;

/**
 * Short strings an engine reports that kvguard echoes (versions, modes, content types). Only values of a
 * harmless shape pass; anything else is replaced, so no secret or markup can ride along.
 */
public final class EngineText {
  private static final Pattern SAFE = Pattern.compile("[A-Za-z0-9._+:/=;\\- ]{1,64}");

  private EngineText() {}

  public static String safe(String value) {
    if (value == null) {
      return "none";
    }
    return SAFE.matcher(value).matches() ? value : "unrecognised value";
  }

  /** A version string, or null when absent; a suspicious one is reported as unrecognised. */
  public static String version(String value) {
    return value == null ? null : safe(value.strip());
  }
}
