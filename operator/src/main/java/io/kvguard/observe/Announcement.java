package io.kvguard.observe;

/**
 * One transition to announce, e.g. one pod turning ProbeFailed.
 *
 * @param alone the message when it is announced on its own ("pod serve-0 (role serve): ...")
 * @param listed how it reads in a list of several ("serve-0 (role serve): ...")
 */
public record Announcement(String alone, String listed) {}
