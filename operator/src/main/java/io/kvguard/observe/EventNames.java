package io.kvguard.observe;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The name of the one Event kept per (involved object, type, reason): the object's name, a dot, and
 * 16 hex digits of a hash of its UID, the type and the reason. The same on every replica and after
 * every restart, so a new leader finds the Event its predecessor wrote and adds to its count
 * instead of creating another; and a policy deleted and created again under the same name (a new
 * UID) starts a new Event.
 */
final class EventNames {
  /** Event names are DNS subdomains: at most 253 characters. */
  private static final int MAX_NAME = 253;

  private static final int HASH_DIGITS = 16;

  private EventNames() {}

  static String of(InvolvedObject object, String type, String reason) {
    String prefix = object.name();
    int room = MAX_NAME - HASH_DIGITS - 1;
    if (prefix.length() > room) {
      // A shortened name must still end in an alphanumeric character to stay a valid subdomain.
      prefix = prefix.substring(0, room).replaceAll("[-.]+$", "");
    }
    return prefix + "." + hash(object.uid() + "\n" + type + "\n" + reason);
  }

  private static String hash(String text) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest).substring(0, HASH_DIGITS);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
