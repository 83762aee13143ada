package io.kvguard.probe;

/**
 * A probe that cannot establish the figures. The message is shown to users and never quotes the
 * engine.
 */
public class ProbeException extends Exception {
  public ProbeException(String message) {
    super(message);
  }
}
