package io.kvguard.observe;

import java.util.List;

/**
 * The message of one Event write: the one transition it announces, or a summary of several that
 * names as many as fit and counts the rest ("37 pods turned ProbeFailed: a (role serve): ...; b
 * (role serve): ... and 35 more"), so a mass failure is one write that still announces every
 * transition.
 */
final class EventMessages {
  /**
   * The API server keeps at most 1024 characters of a message (NoteLengthLimit of events.k8s.io).
   */
  static final int MAX_LENGTH = 1024;

  private EventMessages() {}

  /**
   * @param total how many transitions the write announces (the list may hold fewer: the rest were
   *     counted only)
   * @param verb what the pods did, e.g. "turned ProbeFailed" or "verified"
   */
  static String of(int total, String verb, List<Announcement> announced) {
    if (total == 1 && announced.size() == 1) {
      return truncate(announced.get(0).alone());
    }
    StringBuilder message =
        new StringBuilder().append(total).append(" pods ").append(verb).append(": ");
    int listed = 0;
    for (Announcement announcement : announced) {
      String separator = listed == 0 ? "" : "; ";
      String rest = " and " + (total - listed - 1) + " more";
      boolean last = listed == total - 1;
      int needed = separator.length() + announcement.listed().length() + (last ? 0 : rest.length());
      if (message.length() + needed > MAX_LENGTH) {
        break;
      }
      message.append(separator).append(announcement.listed());
      listed++;
    }
    if (listed == 0) {
      // Not even one fits beside the count: name the first pod cut short, then count the rest.
      String rest = total > 1 ? " and " + (total - 1) + " more" : "";
      String first = announced.isEmpty() ? "" : announced.get(0).listed();
      int room = MAX_LENGTH - message.length() - rest.length() - 3;
      message
          .append(first, 0, Math.max(0, Math.min(first.length(), room)))
          .append("...")
          .append(rest);
      return message.toString();
    }
    if (listed < total) {
      message.append(" and ").append(total - listed).append(" more");
    }
    return message.toString();
  }

  private static String truncate(String message) {
    return message.length() > MAX_LENGTH ? message.substring(0, MAX_LENGTH - 3) + "..." : message;
  }
}
