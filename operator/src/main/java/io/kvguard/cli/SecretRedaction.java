package io.kvguard.cli;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Takes secrets out of what {@code check} writes down: the values of headers that carry
 * credentials, and the API key wherever else it appears, as sent or as an engine or proxy may echo
 * it (JSON-escaped, {@code \/}-escaped, {@code \\u}-escaped, URL-encoded), and the string value of
 * any JSON field named as a secret ({@code api_key}, {@code admin_api_key}, {@code hf_token}...),
 * credentials in URLs and {@code sk-} keys. Bodies are matched as bytes, so nothing else of an
 * answer changes.
 */
final class SecretRedaction {
  static final String MARK = "<redacted>";

  /**
   * The shortest key redacted: a shorter string also occurs in ordinary text, which blanking it
   * would make unreadable, and could appear cut apart by chance.
   */
  static final int MIN_SECRET_CHARS = 8;

  /**
   * Of a key cut apart by a body's cap, the shortest remnant at the cut that is still taken out.
   */
  private static final int MIN_REMNANT_CHARS = 4;

  private static final Set<String> CREDENTIAL_HEADERS =
      Set.of(
          "authorization",
          "proxy-authorization",
          "cookie",
          "set-cookie",
          "x-api-key",
          "api-key",
          "www-authenticate");

  /**
   * A JSON field whose name says it holds a secret, with a string value: SGLang's /server_info
   * lists its server arguments, {@code api_key} and {@code admin_api_key} among them, and other
   * engines may do alike. Names ending in plain {@code _token} are not matched ({@code bos_token}
   * is vocabulary, not a credential).
   */
  private static final Pattern SECRET_FIELD =
      Pattern.compile(
          "(\"(?:[A-Za-z0-9]*[_-])*(?i:api[_-]?key|secret|password|passwd|credentials?"
              + "|(?:hf|api|access|auth|bearer|refresh|admin)[_-]?token)\"\\s*:\\s*)"
              + "\"(?:[^\"\\\\]|\\\\.)*\"");

  /** Credentials in a URL ({@code https://user:token@host/...}, a model path SGLang reports). */
  private static final Pattern URL_CREDENTIALS =
      Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*://)[^/\\s\"'@]+@");

  /** An OpenAI-style secret key ({@code sk-...}), wherever an engine lists one. */
  private static final Pattern SK_KEY = Pattern.compile("\\bsk-[A-Za-z0-9_-]{16,}");

  /** Every form of every secret, as ISO-8859-1 strings of their UTF-8 bytes, longest first. */
  private final List<String> forms;

  private SecretRedaction(List<String> forms) {
    this.forms = forms;
  }

  static SecretRedaction none() {
    return new SecretRedaction(List.of());
  }

  /**
   * @throws IllegalArgumentException for a key shorter than {@link #MIN_SECRET_CHARS}
   */
  static SecretRedaction of(String key) {
    if (key.length() < MIN_SECRET_CHARS) {
      throw new IllegalArgumentException("a key shorter than " + MIN_SECRET_CHARS + " characters");
    }
    Set<String> forms = new LinkedHashSet<>();
    String json = new String(JsonStringEncoder.getInstance().quoteAsString(key));
    forms.add(key);
    forms.add(json);
    forms.add(json.replace("/", "\\/"));
    forms.add(unicodeEscaped(key, "\\u%04x"));
    forms.add(unicodeEscaped(key, "\\u%04X"));
    forms.add(URLEncoder.encode(key, StandardCharsets.UTF_8));
    forms.add(URLEncoder.encode(key, StandardCharsets.UTF_8).replace("+", "%20"));
    List<String> bytes = new ArrayList<>();
    for (String form : forms) {
      bytes.add(latin1(form));
    }
    bytes.sort(Comparator.comparingInt(String::length).reversed());
    return new SecretRedaction(List.copyOf(bytes));
  }

  /** Whether a header of this name carries credentials: its value is never written. */
  static boolean carriesCredentials(String headerName) {
    return CREDENTIAL_HEADERS.contains(headerName.toLowerCase(Locale.ROOT));
  }

  String header(String name, String value) {
    return carriesCredentials(name) ? MARK : text(value);
  }

  String text(String text) {
    return new String(bytes(text.getBytes(StandardCharsets.UTF_8), false), StandardCharsets.UTF_8);
  }

  /**
   * @param cut whether {@code body} is the head of a longer one: a key the cut split leaves its
   *     beginning at the end, which is taken out too
   */
  byte[] bytes(byte[] body, boolean cut) {
    String text = new String(body, StandardCharsets.ISO_8859_1);
    text = SECRET_FIELD.matcher(text).replaceAll("$1\"" + MARK + "\"");
    text = URL_CREDENTIALS.matcher(text).replaceAll("$1" + MARK + "@");
    text = SK_KEY.matcher(text).replaceAll(MARK);
    for (String form : forms) {
      text = text.replace(form, MARK);
    }
    if (cut) {
      text = withoutRemnant(text);
    }
    return text.getBytes(StandardCharsets.ISO_8859_1);
  }

  private String withoutRemnant(String text) {
    for (String form : forms) {
      for (int length = Math.min(form.length() - 1, text.length());
          length >= MIN_REMNANT_CHARS;
          length--) {
        if (text.endsWith(form.substring(0, length))) {
          return text.substring(0, text.length() - length) + MARK;
        }
      }
    }
    return text;
  }

  private static String unicodeEscaped(String key, String format) {
    StringBuilder escaped = new StringBuilder();
    key.chars().forEach(c -> escaped.append(String.format(Locale.ROOT, format, c)));
    return escaped.toString();
  }

  private static String latin1(String form) {
    return new String(form.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
  }
}
