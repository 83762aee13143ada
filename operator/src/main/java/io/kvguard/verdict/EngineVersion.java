package io.kvguard.verdict;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An engine's version as it reported it. Only a release version can be compared: one to four
 * numeric parts, an optional leading {@code v} and an optional {@code .postN} ("0.5.21", "v0.5.22",
 * "2.2.0", "0.6.4.post1"). Everything else is unknown: dev and pre-release builds
 * ("0.0.0.dev1+gbb737d7a8", "0.5.22rc1"), local builds ("0.11.0+cu128"), llama.cpp build ids
 * ("b4567-abc"), and "0.0.0", which source builds report when they carry no version. An unknown
 * version never counts as new enough.
 *
 * @param text the reported string (already sanitised by the probe), never null
 * @param parts the numeric parts padded to four, then the post-release number; empty when unknown
 */
public record EngineVersion(String text, List<Integer> parts) {
  private static final Pattern RELEASE =
      Pattern.compile("v?([0-9]{1,9}(?:\\.[0-9]{1,9}){0,3})(?:\\.post([0-9]{1,9}))?");
  private static final int PARTS = 4;

  public EngineVersion {
    Objects.requireNonNull(text, "text");
    parts = List.copyOf(parts);
  }

  /** Never fails: a string that is not a release version gives an unknown version. */
  public static EngineVersion parse(String text) {
    Objects.requireNonNull(text, "text");
    Matcher release = RELEASE.matcher(text.strip());
    if (!release.matches()) {
      return new EngineVersion(text, List.of());
    }
    List<Integer> parts = new ArrayList<>();
    for (String part : release.group(1).split("\\.")) {
      parts.add(Integer.parseInt(part));
    }
    while (parts.size() < PARTS) {
      parts.add(0);
    }
    parts.add(release.group(2) == null ? 0 : Integer.parseInt(release.group(2)));
    if (parts.stream().allMatch(p -> p == 0)) {
      return new EngineVersion(text, List.of());
    }
    return new EngineVersion(text, parts);
  }

  /** A release version, for versions written in code (advisories); fails on anything else. */
  public static EngineVersion release(String text) {
    EngineVersion version = parse(text);
    if (!version.isRelease()) {
      throw new IllegalArgumentException(text + " is not a release version");
    }
    return version;
  }

  public boolean isRelease() {
    return !parts.isEmpty();
  }

  /** True when both are release versions and this one is strictly older. */
  public boolean isOlderThan(EngineVersion other) {
    if (!isRelease() || !other.isRelease()) {
      throw new IllegalStateException(
          "only release versions compare (" + text + ", " + other.text + ")");
    }
    for (int i = 0; i < parts.size(); i++) {
      int difference = Integer.compare(parts.get(i), other.parts.get(i));
      if (difference != 0) {
        return difference < 0;
      }
    }
    return false;
  }

  @Override
  public String toString() {
    return text;
  }
}
