package io.kvguard.probe;

import java.util.regex.Pattern;

/**
 * Short strings an engine reports that kvguard echoes (versions, modes, content types, engine
 * labels). Only values of a harmless shape pass, and of those, any that looks like it carries a
 * credential (api_key, token, secret, password, bearer, an sk- key) is redacted, so no secret or
 * markup can ride along.
 */
public final class EngineText {
  public static final String UNRECOGNISED = "unrecognised value";
  public static final String REDACTED = "redacted value";
  private static final Pattern SAFE = Pattern.compile("[A-Za-z0-9._+:/=;\\- ]{1,64}");
  private static final Pattern SECRET_LOOKING =
      Pattern.compile(
          "(?i).*(api[_.\\-]?key|token|secret|passw(or)?d|bearer|authori[sz]ation|credential|(^|[^a-z])sk-[a-z0-9]).*");

  private EngineText() {}

  public static String safe(String value) {
    if (value == null) {
      return "none";
    }
    if (!SAFE.matcher(value).matches()) {
      return UNRECOGNISED;
    }
    return SECRET_LOOKING.matcher(value).matches() ? REDACTED : value;
  }

  /**
   * A version string, or null when absent; a suspicious one is reported as unrecognised or
   * redacted.
   */
  public static String version(String value) {
    return value == null ? null : safe(value.strip());
  }
}
