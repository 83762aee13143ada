package io.kvguard.probe;

import io.kvguard.verdict.ProbeMarker;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The request the rejection probe sends: a prompt of exactly {@code tokens} tokens asking for one
 * output token. Where the engine accepts token IDs no tokenizer is involved; the ID is a small one
 * present in every common vocabulary, and its meaning does not matter because the engine must
 * refuse before running it. Each engine's {@link EngineRejection} builds its own.
 *
 * <p>The body is {@code prefix + unit × tokens (joined by separator) + suffix}, the first units
 * replaced by the prompt's marker ({@link #marked}), produced while it is sent ({@link
 * #publisher()}): a prompt sized from what an engine claims (issue 20: 30,000,000 tokens) is never
 * built in memory. Its length is known in advance and sent as Content-Length.
 */
public record OverLimitPrompt(
    String path,
    String prefix,
    String unit,
    String separator,
    long tokens,
    String suffix,
    Form form,
    List<String> lead) {
  static final int TOKEN_ID = 100;

  /** How the prompt's units are written, which decides how a marker is written. */
  enum Form {
    /** Token IDs in a JSON array. */
    TOKEN_IDS,
    /** One-letter words of text, each preceded by a space (TGI). */
    WORDS
  }

  public OverLimitPrompt {
    lead = List.copyOf(lead);
    if (lead.size() > tokens) {
      throw new IllegalArgumentException("a prompt's lead units are some of its units");
    }
  }

  /** {@code before} + a JSON array of {@code tokens} token IDs + {@code after}. */
  static OverLimitPrompt tokenIds(String path, String before, long tokens, String after) {
    return new OverLimitPrompt(
        path,
        before + "[",
        String.valueOf(TOKEN_ID),
        ",",
        tokens,
        "]" + after,
        Form.TOKEN_IDS,
        List.of());
  }

  /**
   * {@code before} + {@code unit} repeated {@code tokens} times + {@code after} (engines that take
   * text only); {@code unit} is a space and one letter.
   */
  static OverLimitPrompt text(String path, String before, String unit, long tokens, String after) {
    return new OverLimitPrompt(path, before, unit, "", tokens, after, Form.WORDS, List.of());
  }

  /**
   * This prompt with {@code marker} in place of its first filler units (issue 26 §4): as token IDs
   * or as words, each unit of the marker the same size as the filler unit it replaces, so the
   * prompt's length in tokens and in bytes is unchanged. At the start because the engine of the
   * incident (SGLang) keeps the start of a prompt it cuts ({@code --allow-auto-truncate}); a prompt
   * shorter than a marker carries its first symbols only.
   */
  OverLimitPrompt marked(ProbeMarker marker) {
    int units = (int) Math.min(ProbeMarker.SYMBOLS, tokens);
    List<String> marked = new ArrayList<>(units);
    for (int i = 0; i < units; i++) {
      marked.add(form == Form.TOKEN_IDS ? String.valueOf(marker.tokenId(i)) : " " + marker.word(i));
    }
    return new OverLimitPrompt(path, prefix, unit, separator, tokens, suffix, form, marked);
  }

  /**
   * The prompt without its marker units: {@link ProbeMarker} hides its value, and a record's
   * generated toString would print them (issue 26 §4: no message or log carries a marker).
   */
  @Override
  public String toString() {
    return "OverLimitPrompt[path="
        + path
        + ", unit="
        + unit
        + ", tokens="
        + tokens
        + ", form="
        + form
        + ", "
        + lead.size()
        + " marker units hidden]";
  }

  /** Bytes of the whole body. */
  public long contentLength() {
    long units =
        Math.addExact(
            Math.multiplyExact(tokens - lead.size(), (long) bytes(unit).length),
            lead.stream().mapToLong(u -> bytes(u).length).sum());
    long separators =
        tokens == 0 ? 0 : Math.multiplyExact(tokens - 1, (long) bytes(separator).length);
    return Math.addExact(
        Math.addExact(bytes(prefix).length + (long) bytes(suffix).length, units), separators);
  }

  /** The body as it is sent: generated in small chunks on demand, with its exact Content-Length. */
  public HttpRequest.BodyPublisher publisher() {
    return HttpRequest.BodyPublishers.fromPublisher(
        HttpRequest.BodyPublishers.ofInputStream(this::stream), contentLength());
  }

  /** The body as a stream that produces it on the fly. */
  public InputStream stream() {
    return new PromptStream(this);
  }

  /** The whole body in memory: for tests of small prompts only. */
  byte[] body() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (InputStream in = stream()) {
      in.transferTo(out);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  static String quote(String text) {
    return "\""
        + new String(
            com.fasterxml.jackson.core.io.JsonStringEncoder.getInstance()
                .quoteAsString(text == null ? "" : text))
        + "\"";
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * prefix, then the units (the lead's first) with separators between them, then suffix; holds one
   * unit's bytes at a time.
   */
  private static final class PromptStream extends InputStream {
    private final byte[] prefix;
    private final byte[] unit;
    private final byte[][] lead;
    private final byte[] separator;
    private final byte[] suffix;
    private final long tokens;
    private long unitsDone;
    private byte[] current;
    private int position;
    private boolean onUnit;
    private int stage; // 0 prefix, 1 units, 2 suffix, 3 done

    PromptStream(OverLimitPrompt prompt) {
      this.prefix = bytes(prompt.prefix);
      this.unit = bytes(prompt.unit);
      this.lead = prompt.lead.stream().map(OverLimitPrompt::bytes).toArray(byte[][]::new);
      this.separator = bytes(prompt.separator);
      this.suffix = bytes(prompt.suffix);
      this.tokens = prompt.tokens;
      this.current = prefix;
    }

    @Override
    public int read() {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] into, int offset, int length) {
      int written = 0;
      while (written < length) {
        if (position == current.length && !advance()) {
          break;
        }
        int n = Math.min(length - written, current.length - position);
        System.arraycopy(current, position, into, offset + written, n);
        position += n;
        written += n;
      }
      return written == 0 && length > 0 ? -1 : written;
    }

    /** Moves to the next piece of the body; false at the end. */
    private boolean advance() {
      position = 0;
      if (stage == 0) {
        stage = 1;
        if (tokens > 0) {
          current = unitAt(0);
          unitsDone = 1;
          onUnit = true;
          return true;
        }
      }
      if (stage == 1 && unitsDone < tokens) {
        // Separator and unit alternate: the separator is written first, then the unit it precedes.
        if (onUnit && separator.length > 0) {
          current = separator;
          onUnit = false;
        } else {
          current = unitAt(unitsDone);
          unitsDone++;
          onUnit = true;
        }
        return true;
      }
      if (stage == 1) {
        stage = 2;
        current = suffix;
        return true;
      }
      stage = 3;
      current = new byte[0];
      return false;
    }

    /** The bytes of unit {@code index}: a lead unit, or the filler. */
    private byte[] unitAt(long index) {
      return index < lead.length ? lead[(int) index] : unit;
    }
  }
}
