package io.kvguard.cli;

/**
 * The command line cannot be acted on; the message says why in terms of the flags the user typed.
 */
public final class UsageException extends Exception {
  public UsageException(String message) {
    super(message);
  }
}
